/// Makes a batch's progress durable (the cursor store, for one sink's cursor).
public protocol ProgressRecorder: AnyObject, Sendable {
    /// Makes `progress` durable.
    func record(_ progress: ActivityProgress) throws
}
