package import BridgeConfig

/// The one place that reads `state.backend` for the running bridge and its commands.
package enum StateBackends {
    /// The backend `config.state` names.
    package static func make(_ config: BridgeConfig) -> any StateBackend {
        switch config.state.backend {
        case .local: LocalStateBackend(stateDir: config.delivery.stateDir)
        case .jetstream: SharedStateBackend(state: config.state, stateDir: config.delivery.stateDir)
        }
    }
}
