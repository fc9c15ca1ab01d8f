import CYAML

/// One libyaml parser over one text: the only owner of a `yaml_parser_t` and the input buffer it reads.
///
/// Not Sendable: libyaml keeps mutable state in the parser struct; one parse runs on one thread.
final class YAMLParser {
    /// A parse event, copied out of libyaml's `yaml_event_t` so no C type leaves this file.
    enum Event {
        case streamStart
        case streamEnd
        case documentStart(SourceMark)
        case documentEnd
        case alias(anchor: String, mark: SourceMark)
        case scalar(YAMLScalar, anchor: String?, mark: SourceMark)
        case sequenceStart(anchor: String?, tag: String?, mark: SourceMark)
        case sequenceEnd
        case mappingStart(anchor: String?, tag: String?, mark: SourceMark)
        case mappingEnd
    }

    /// A syntax error as libyaml reports it.
    struct Failure: Error {
        /// What is wrong ("mapping values are not allowed in this context").
        var problem: String
        /// Where, or nil for reader errors, which only carry `byteOffset`.
        var mark: SourceMark?
        /// The byte offset of the problem (reader errors).
        var byteOffset: Int
        /// What libyaml was doing, with the position where that started.
        var context: (text: String, mark: SourceMark)?
    }

    private let parser: UnsafeMutablePointer<yaml_parser_t>
    // libyaml reads the input in place and does not copy it: the buffer must outlive the parser, so we own it.
    private let input: UnsafeMutableBufferPointer<UInt8>

    /// Prepares to parse `bytes` (UTF-8, without a byte-order mark).
    init(bytes: [UInt8]) {
        parser = .allocate(capacity: 1)
        // yaml_parser_initialize fails only when malloc does, which we treat like Swift's own allocation failure.
        precondition(yaml_parser_initialize(parser) == 1, "libyaml could not allocate a parser")
        input = .allocate(capacity: max(bytes.count, 1))
        _ = input.initialize(from: bytes)
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(parser, input.baseAddress, bytes.count)
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
        input.deallocate()
    }

    /// The next event, or the syntax error that stops the parse.
    func nextEvent() -> Result<Event, Failure> {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else { return .failure(currentFailure()) }
        // Every successfully parsed event owns heap strings (anchor, tag, value) that must be freed.
        defer { yaml_event_delete(&event) }
        let mark = Self.mark(event.start_mark)
        switch event.type {
        case YAML_STREAM_START_EVENT: return .success(.streamStart)
        case YAML_DOCUMENT_START_EVENT: return .success(.documentStart(mark))
        case YAML_DOCUMENT_END_EVENT: return .success(.documentEnd)
        case YAML_ALIAS_EVENT:
            return .success(.alias(anchor: Self.string(event.data.alias.anchor) ?? "", mark: mark))
        case YAML_SCALAR_EVENT:
            let data = event.data.scalar
            let text = String(decoding: UnsafeBufferPointer(start: data.value, count: data.length), as: UTF8.self)
            let scalar = YAMLScalar(
                text: text,
                style: Self.style(data.style),
                tag: Self.string(data.tag),
                endIndex: Int(event.end_mark.index)
            )
            return .success(.scalar(scalar, anchor: Self.string(data.anchor), mark: mark))
        case YAML_SEQUENCE_START_EVENT:
            let data = event.data.sequence_start
            return .success(.sequenceStart(anchor: Self.string(data.anchor), tag: Self.string(data.tag), mark: mark))
        case YAML_SEQUENCE_END_EVENT: return .success(.sequenceEnd)
        case YAML_MAPPING_START_EVENT:
            let data = event.data.mapping_start
            return .success(.mappingStart(anchor: Self.string(data.anchor), tag: Self.string(data.tag), mark: mark))
        case YAML_MAPPING_END_EVENT: return .success(.mappingEnd)
        default: return .success(.streamEnd)
        }
    }

    private func currentFailure() -> Failure {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? "unknown syntax error"
        var context: (String, SourceMark)? = nil
        if let text = state.context { context = (String(cString: text), Self.mark(state.context_mark)) }
        // Reader errors (bad encoding, control characters) carry only a byte offset, not a mark.
        let mark = state.error == YAML_READER_ERROR ? nil : Self.mark(state.problem_mark)
        return Failure(problem: problem, mark: mark, byteOffset: Int(state.problem_offset), context: context)
    }

    private static func mark(_ mark: yaml_mark_t) -> SourceMark {
        SourceMark(line: Int(mark.line) + 1, column: Int(mark.column) + 1, index: Int(mark.index))
    }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let pointer else { return nil }
        return String(cString: pointer)
    }

    private static func style(_ style: yaml_scalar_style_t) -> ScalarStyle {
        switch style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: .literal
        case YAML_FOLDED_SCALAR_STYLE: .folded
        default: .plain
        }
    }
}

@available(*, unavailable)
extension YAMLParser: Sendable {}
