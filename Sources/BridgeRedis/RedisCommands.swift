/// Commands encoded for the wire (RESP arrays of bulk strings), appended one after another for a pipeline.
///
/// `begin(arguments:)` opens a command of that many arguments; exactly that many `argument` calls follow.
package struct RedisCommands: Sendable {
    /// The encoded bytes of every command.
    package private(set) var bytes: [UInt8] = []
    /// Where each command ends in `bytes`.
    package private(set) var ends: [Int] = []
    private var missingArguments = 0

    /// An empty pipeline; `capacity` bytes reserved.
    package init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// How many commands were added.
    package var count: Int { ends.count }

    /// Opens a command of `arguments` arguments (the command name is the first).
    package mutating func begin(arguments: Int) {
        precondition(missingArguments == 0, "the previous Redis command lacks arguments")
        precondition(arguments > 0, "a Redis command has at least its name")
        bytes.append(UInt8(ascii: "*"))
        appendDecimal(arguments)
        missingArguments = arguments
        ends.append(-1)
    }

    /// Adds the next argument, as UTF-8.
    package mutating func argument(_ text: String) {
        var text = text
        text.withUTF8 { argument(UnsafeRawBufferPointer($0)) }
    }

    /// Adds the next argument, a decimal number.
    package mutating func argument(_ number: Int) {
        argument(String(number))
    }

    /// Adds the next argument, as given.
    package mutating func argument(_ value: UnsafeRawBufferPointer) {
        precondition(missingArguments > 0, "more arguments than the Redis command announced")
        bytes.append(UInt8(ascii: "$"))
        appendDecimal(value.count)
        bytes.append(contentsOf: value)
        bytes.append(13)
        bytes.append(10)
        missingArguments -= 1
        if missingArguments == 0 { ends[ends.count - 1] = bytes.count }
    }

    /// Adds the next argument, as given.
    package mutating func argument(_ value: [UInt8]) {
        value.withUnsafeBytes { argument($0) }
    }

    /// Adds a whole command: `arguments` as UTF-8.
    package mutating func command(_ arguments: String...) {
        begin(arguments: arguments.count)
        for argument in arguments { self.argument(argument) }
    }

    /// Whether every command has all its arguments.
    var isComplete: Bool { missingArguments == 0 }

    private mutating func appendDecimal(_ value: Int) {
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
        bytes.append(13)
        bytes.append(10)
    }
}
