# The harness names a seat (HARNESS[:MODEL]) starts with.
_panel_harnesses() {
    command panel-judge --list-harnesses --json 2>/dev/null | sed -n 's/^    "name": "\([^"]*\)",\{0,1\}$/\1/p'
}

_panel__judge() {
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
                cmd="panel__judge"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        panel__judge)
            opts="-h -V --seat --lens --lenses --cross --contract --allow-correlated --stage --brief --orders --name --writer-family --plan --repo --earlier --fix-proof --canary --history --no-history --agree --stop-when-decided --cascade --cascade-order --out --keep-runs --timeout --retries --jobs --max-budget-usd --budget-usd --tier --prices --estimate --harness-file --family --pass-env --harness-cap --sandbox --sandbox-read --sandbox-write --sandbox-allow --max-output --judge-memory --judge-processes --judge-disk --dry-run --list-harnesses --doctor --json --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --seat)
                    COMPREPLY=($(compgen -W "$(_panel_harnesses)" -- "${cur}"))
                    compopt -o nospace 2>/dev/null
                    return 0
                    ;;
                --lens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lenses)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --contract)
                    COMPREPLY=($(compgen -W "verdict review pr pairwise" -- "${cur}"))
                    return 0
                    ;;
                --stage)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --brief)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --orders)
                    COMPREPLY=($(compgen -W "both alternate" -- "${cur}"))
                    return 0
                    ;;
                --name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --writer-family)
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
                --earlier)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fix-proof)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --canary)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --history)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --agree)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cascade-order)
                    COMPREPLY=($(compgen -W "given cost" -- "${cur}"))
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
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _panel__judge -o nosort -o bashdefault -o default panel-judge
else
    complete -F _panel__judge -o bashdefault -o default panel-judge
fi
