# The harness names a seat (HARNESS[:MODEL]) starts with.
_panel_harnesses() {
    command panel-judge --list-harnesses --json 2>/dev/null | sed -n 's/^    "name": "\([^"]*\)",\{0,1\}$/\1/p'
}

_panel__vote() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="panel__vote"
                ;;
            panel__vote,apply)
                cmd="panel__vote__subcmd__apply"
                ;;
            panel__vote,help)
                cmd="panel__vote__subcmd__help"
                ;;
            panel__vote__subcmd__help,apply)
                cmd="panel__vote__subcmd__help__subcmd__apply"
                ;;
            panel__vote__subcmd__help,help)
                cmd="panel__vote__subcmd__help__subcmd__help"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        panel__vote)
            opts="-h -V --candidate --brief --seat --reads --stop-when-decided --cascade --agree --judge --round --json --out --keep-runs --timeout --retries --jobs --max-budget-usd --budget-usd --tier --prices --estimate --harness-file --family --pass-env --harness-cap --sandbox --sandbox-read --sandbox-write --sandbox-allow --max-output --judge-memory --judge-processes --judge-disk --help --version apply help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --candidate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --brief)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seat)
                    COMPREPLY=($(compgen -W "$(_panel_harnesses)" -- "${cur}"))
                    compopt -o nospace 2>/dev/null
                    return 0
                    ;;
                --reads)
                    COMPREPLY=($(compgen -W "$(_panel_harnesses)" -- "${cur}"))
                    compopt -o nospace 2>/dev/null
                    return 0
                    ;;
                --agree)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --judge)
                    COMPREPLY=($(compgen -W "$(_panel_harnesses)" -- "${cur}"))
                    compopt -o nospace 2>/dev/null
                    return 0
                    ;;
                --round)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keep-runs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-budget-usd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --budget-usd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tier)
                    COMPREPLY=($(compgen -W "standard flex" -- "${cur}"))
                    return 0
                    ;;
                --prices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --harness-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --family)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pass-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --harness-cap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sandbox)
                    COMPREPLY=($(compgen -W "auto required landlock off" -- "${cur}"))
                    return 0
                    ;;
                --sandbox-read)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sandbox-write)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sandbox-allow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --judge-memory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --judge-processes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --judge-disk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        panel__subcmd__vote__subcmd__apply)
            opts="-h --agree --judge --round --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --agree)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --judge)
                    COMPREPLY=($(compgen -W "$(_panel_harnesses)" -- "${cur}"))
                    compopt -o nospace 2>/dev/null
                    return 0
                    ;;
                --round)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        panel__subcmd__vote__subcmd__help)
            opts="apply help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        panel__subcmd__vote__subcmd__help__subcmd__apply)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        panel__subcmd__vote__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _panel__vote -o nosort -o bashdefault -o default panel-vote
else
    complete -F _panel__vote -o bashdefault -o default panel-vote
fi
