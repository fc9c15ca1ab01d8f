# bash completion for directus-bridge(1): its commands, each command's options, and the values of the options that
# take a fixed set. The .deb installs it as /usr/share/bash-completion/completions/directus-bridge.
# Tests/BridgeAppTests/ShellCompletionTests.swift keeps it in step with the program's commands and options.

_directus_bridge() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=${COMP_WORDS[COMP_CWORD - 1]}
    local config="-c --config -s --set"
    local filters="--collection --since --id --sink"
    local options

    # The value of an option: a file for --config, a fixed set for the log overrides, free text for the filters and
    # --set KEY.PATH=VALUE.
    case $prev in
    -c | --config)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    --log-level)
        mapfile -t COMPREPLY < <(compgen -W "trace debug info warn error" -- "$cur")
        return
        ;;
    --log-format)
        mapfile -t COMPREPLY < <(compgen -W "text json" -- "$cur")
        return
        ;;
    --collection | --since | --id | --sink | -s | --set)
        COMPREPLY=()
        return
        ;;
    esac

    if ((COMP_CWORD == 1)); then
        mapfile -t COMPREPLY < <(compgen -W "run validate check dlq resync status --version --help" -- "$cur")
        return
    fi
    case ${COMP_WORDS[1]} in
    run) options="$config --log-level --log-format" ;;
    validate) options="$config" ;;
    resync) options="$config --sink" ;;
    check) options="$config --send-test-event --json" ;;
    status) options="$config --json" ;;
    dlq)
        if ((COMP_CWORD == 2)); then
            mapfile -t COMPREPLY < <(compgen -W "list replay purge --help" -- "$cur")
            return
        fi
        case ${COMP_WORDS[2]} in
        list) options="$config --json $filters" ;;
        replay | purge) options="$config --dry-run $filters" ;;
        *) return ;;
        esac
        ;;
    *) return ;;
    esac
    mapfile -t COMPREPLY < <(compgen -W "$options -h --help" -- "$cur")
}

complete -F _directus_bridge directus-bridge
