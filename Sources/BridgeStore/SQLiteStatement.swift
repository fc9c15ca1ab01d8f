import CSQLite

/// Owner of one prepared statement (`sqlite3_stmt *`): bind by 1-based index, step, read typed columns.
///
/// Confined to the connection's thread, like its `SQLiteDatabase`. Finalised in deinit; a statement that
/// outlives its database is still safe (the connection is closed with `sqlite3_close_v2`, which waits for
/// the last statement).
public final class SQLiteStatement {
    let raw: OpaquePointer
    private let connection: OpaquePointer

    init(raw: OpaquePointer, connection: OpaquePointer) {
        self.raw = raw
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(raw)
    }

    /// The statement's SQL text.
    public var sql: String { sqlite3_sql(raw).map { String(cString: $0) } ?? "" }

    // MARK: - Binding (indexes start at 1)

    /// Binds an integer.
    public func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(raw, index, value))
    }

    /// Binds an `Int` as a 64-bit integer.
    public func bind(_ value: Int, at index: Int32) throws {
        try bind(Int64(value), at: index)
    }

    /// Binds a double.
    public func bind(_ value: Double, at index: Int32) throws {
        try check(sqlite3_bind_double(raw, index, value))
    }

    /// Binds UTF-8 text (SQLite copies it).
    public func bind(_ value: String, at index: Int32) throws {
        let code = value.withCString { csqlite_bind_text_transient(raw, index, $0, Int32(value.utf8.count)) }
        try check(code)
    }

    /// Binds bytes (SQLite copies them). An empty array binds an empty blob, not NULL.
    public func bind(_ value: [UInt8], at index: Int32) throws {
        try value.withUnsafeBytes { try bind($0, at: index) }
    }

    /// Binds bytes where they lie (SQLite copies them). No bytes bind an empty blob, not NULL.
    public func bind(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        guard let start = bytes.baseAddress, !bytes.isEmpty else {
            try check(sqlite3_bind_zeroblob(raw, index, 0))
            return
        }
        try check(csqlite_bind_blob_transient(raw, index, start, Int32(bytes.count)))
    }

    /// Binds NULL.
    public func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(raw, index))
    }

    /// Binds any value.
    public func bind(_ value: SQLiteValue, at index: Int32) throws {
        switch value {
        case .integer(let number): try bind(number, at: index)
        case .real(let number): try bind(number, at: index)
        case .text(let text): try bind(text, at: index)
        case .blob(let bytes): try bind(bytes, at: index)
        case .null: try bindNull(at: index)
        }
    }

    /// Binds `values` to parameters 1, 2, ….
    public func bind(_ values: [SQLiteValue]) throws {
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    // MARK: - Running

    /// Runs to the next row: true when a row is ready to read, false when the statement is done.
    @discardableResult
    public func step() throws -> Bool {
        let code = sqlite3_step(raw)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw error(code)
        }
    }

    /// Makes the statement ready to run again and clears its bindings.
    public func reset() {
        // sqlite3_reset repeats the last step's error, which step() already reported.
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    // MARK: - Reading the current row (indexes start at 0)

    /// Whether column `index` is NULL.
    public func isNull(at index: Int32) -> Bool { sqlite3_column_type(raw, index) == SQLITE_NULL }

    /// Column `index` as an integer (NULL reads as 0).
    public func int64(at index: Int32) -> Int64 { sqlite3_column_int64(raw, index) }

    /// Column `index` as an `Int` (NULL reads as 0).
    public func int(at index: Int32) -> Int { Int(sqlite3_column_int64(raw, index)) }

    /// Column `index` as a double (NULL reads as 0).
    public func double(at index: Int32) -> Double { sqlite3_column_double(raw, index) }

    /// Column `index` as text (NULL reads as "").
    public func string(at index: Int32) -> String {
        guard let text = sqlite3_column_text(raw, index) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, index))  // after column_text, so it counts the UTF-8 form
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `index` as bytes (NULL reads as []).
    public func blob(at index: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(raw, index) else { return [] }
        let count = Int(sqlite3_column_bytes(raw, index))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Column `index` as text, or nil when NULL.
    public func optionalString(at index: Int32) -> String? { isNull(at: index) ? nil : string(at: index) }

    /// Column `index` as an integer, or nil when NULL.
    public func optionalInt64(at index: Int32) -> Int64? { isNull(at: index) ? nil : int64(at: index) }

    /// Column `index` with its stored type.
    public func value(at index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(raw, index) {
        case SQLITE_INTEGER: .integer(int64(at: index))
        case SQLITE_FLOAT: .real(double(at: index))
        case SQLITE_TEXT: .text(string(at: index))
        case SQLITE_BLOB: .blob(blob(at: index))
        default: .null
        }
    }

    // MARK: - Errors

    private func check(_ code: Int32) throws {
        guard code != SQLITE_OK else { return }
        throw error(code)
    }

    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(resultCode: code, extendedCode: sqlite3_extended_errcode(connection),
            message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}

@available(*, unavailable)
extension SQLiteStatement: Sendable {}
