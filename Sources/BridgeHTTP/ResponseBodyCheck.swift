/// Looks at a response body while it arrives and may refuse it before it is all kept: a REST client counts the JSON
/// values of an answer whose tree would cost far more memory than its bytes (docs/ARCHITECTURE.md "Answers too
/// large"). One check serves one transfer, on the thread that runs it.
public protocol ResponseBodyCheck {
    /// Looks at the next bytes of the body; returns why the body is refused, or nil to go on.
    mutating func inspect(_ bytes: UnsafeRawBufferPointer) -> String?
}
