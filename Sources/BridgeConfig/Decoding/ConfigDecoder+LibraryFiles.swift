extension ConfigDecoder {
    /// Checks file `path`, named by `field`, that a C library opens again itself later (a CA file, a NATS credentials
    /// file, a Kafka key): it must be a regular file the bridge can read, or a directory where `directoryAllowed`.
    /// With `pem`, the file must hold a line starting with `marker`: without one, the library would fail only when
    /// connecting. Nothing more of the content is checked: parsing it is the library's business. Problems are
    /// reported at `mark`; returns whether the file passed.
    ///
    /// The library opens the path itself, so the loader's read is only a look: a pipe is refused here rather than
    /// drained (docs/RELIABILITY.md "Files and transport").
    @discardableResult
    package mutating func checkLibraryFile(
        _ path: String, field: String, at mark: SourceMark, pem: String? = nil, marker: String = "-----BEGIN",
        directoryAllowed: Bool = false
    ) -> Bool {
        switch files.readFile(atPath: path, use: .reopenedByLibrary) {
        case .success(let bytes):
            guard let pem, bytes.firstRange(of: Array(marker.utf8)) == nil else { return true }
            report("\(field): \"\(path)\" holds no PEM \(pem)", at: mark)
            return false
        case .failure(let problem):
            if directoryAllowed && problem == .directory { return true }
            report("\(field): cannot read \"\(path)\": \(problem.reason)", at: mark)
            return false
        }
    }
}
