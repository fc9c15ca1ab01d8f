/// What a command reads of `bridge.yaml` (docs/configuration.md, "What each command reads").
public enum ConfigScope: Sendable, Equatable {
    /// Everything `run` reads: `run` itself, `check`, and `validate`, which checks what `run` will read.
    case everything
    /// Everything but the `directus` section, for `status`, `dlq` and `resync`, which never contact Directus: that
    /// section is not decoded, so an undefined `${VAR}` that only it uses (a token kept in a root-only secrets file)
    /// and its unreadable `*_file`s are no error. A variable used anywhere else is still named.
    case withoutDirectus
}

extension ConfigScope {
    /// `yamlIssues` without the undefined variables that `root`'s sections outside this scope alone use. An issue is
    /// dropped only when it sits on a scalar the scope does not read (inside `directus`, or an `x-` key holding
    /// anchors) and on none it reads: an anchor under `directus` aliased into `sinks` still counts.
    func relevant(_ yamlIssues: [ConfigIssue], root: YAMLNode) -> [ConfigIssue] {
        guard self == .withoutDirectus, case .mapping(let entries) = root.content else { return yamlIssues }
        var read: [ConfigIssue] = []
        var unread: [ConfigIssue] = []
        for entry in entries {
            let isRead = entry.key != "directus" && !entry.key.hasPrefix("x-")
            if isRead {
                read += entry.value.undefinedVariableIssues
            } else {
                unread += entry.value.undefinedVariableIssues
            }
        }
        return yamlIssues.filter { !unread.contains($0) || read.contains($0) }
    }
}

extension YAMLNode {
    /// The undefined-variable issues of every scalar in this tree (aliased copies included).
    var undefinedVariableIssues: [ConfigIssue] {
        switch content {
        case .scalar(let scalar): scalar.undefinedVariables
        case .sequence(let items): items.flatMap(\.undefinedVariableIssues)
        case .mapping(let entries): entries.flatMap(\.value.undefinedVariableIssues)
        }
    }
}
