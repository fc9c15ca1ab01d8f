package import BridgeConfig

extension ConfigDecoder {
    /// A broker sink's CA file (PEM) trusted besides the system's: `ca_file`, or `tls: { ca_file }` as
    /// `directus.tls.ca_file` is written (the contract spells it so for the Redis sink; both are read), at most one
    /// of them, checked as a file a library opens. Nil when neither is set.
    package mutating func brokerCAFile(_ map: MappingView) -> String? {
        let tls = section(map, "tls", keys: ["ca_file"])
        let nested = string(tls, "ca_file")
        let flat = string(map, "ca_file")
        if flat != nil, nested != nil, let node = map["tls"] {
            report("\(map.field("tls")).ca_file: give the CA file once, as ca_file or as tls.ca_file", at: node.mark)
        }
        guard let caFile = flat ?? nested else { return nil }
        let (view, key) = flat != nil ? (map, "ca_file") : (tls, "ca_file")
        if let node = view[key] {
            checkLibraryFile(caFile, field: view.field(key), at: node.mark, pem: "certificate")
        }
        return caFile
    }
}
