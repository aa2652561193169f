# The harness names a seat (HARNESS[:MODEL]) starts with.
_panel_harnesses() {
    command panel-judge --list-harnesses --json 2>/dev/null | sed -n 's/^    "name": "\([^"]*\)",\{0,1\}$/\1/p'
}

_panel__tally() {
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
                cmd="panel__tally"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        panel__tally)
            opts="-h -V --json --format --agree --each --last-wins --pr --plan --repo --fix-proof --view --require-canaries --ledger --gold --require-kappa --require-accuracy --inconsistent --svg --bootstrap --runs --keep --history --since --seat --run --judge --candidate --last --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "text seed json markdown" -- "${cur}"))
                    return 0
                    ;;
                --agree)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fix-proof)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --view)
                    COMPREPLY=($(compgen -W "writer skips decisions" -- "${cur}"))
                    return 0
                    ;;
                --gold)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --require-kappa)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --require-accuracy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --inconsistent)
                    COMPREPLY=($(compgen -W "abstain exclude" -- "${cur}"))
                    return 0
                    ;;
                --svg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --history)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seat)
                    COMPREPLY=($(compgen -W "$(_panel_harnesses)" -- "${cur}"))
                    compopt -o nospace 2>/dev/null
                    return 0
                    ;;
                --run)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --judge)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --candidate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --last)
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
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _panel__tally -o nosort -o bashdefault -o default panel-tally
else
    complete -F _panel__tally -o bashdefault -o default panel-tally
fi
