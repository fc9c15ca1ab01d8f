/// What a librdkafka property that names a file holds: the properties librdkafka's CONFIGURATION.md documents as
/// paths, for the version the bridge is built against (2.0). librdkafka and its OpenSSL open these paths themselves as
/// the producer is made, so the configuration loader checks them first (a named pipe there made that `open` wait
/// for a writer forever; a missing file failed only then, with OpenSSL's words).
///
/// Not here: `plugin.library.paths` and the deprecated `ssl.engine.location` name libraries the dynamic loader looks
/// up (a bare name is searched for), left to the sink's start like every `plugin.*` setting; the inline
/// `ssl.*.pem` settings hold the PEM text itself.
package enum KafkaFileProperty: Sendable, Equatable {
    /// A PEM file; the text names its content for messages ("certificate", "private key", "CRL").
    case pem(String)
    /// CA certificates: a PEM file, a directory of them (OpenSSL's hashed directory) or `probe`, which makes
    /// librdkafka look in the system's usual places.
    case caLocation
    /// A file of a binary format of its own (a PKCS#12 keystore, a Kerberos keytab).
    case binary

    /// The file properties by name.
    package static let byName: [String: KafkaFileProperty] = [
        "ssl.ca.location": .caLocation,
        "ssl.certificate.location": .pem("certificate"),
        "ssl.key.location": .pem("private key"),
        "ssl.crl.location": .pem("CRL"),
        "ssl.keystore.location": .binary,
        "sasl.kerberos.keytab": .binary,
    ]

    /// The value of `caLocation` that names no path.
    package static let probe = "probe"
}
