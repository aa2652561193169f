# The harness names a seat (HARNESS[:MODEL]) starts with.
_panel_harnesses() {
    command panel-judge --list-harnesses --json 2>/dev/null | sed -n 's/^    "name": "\([^"]*\)",\{0,1\}$/\1/p'
}

_review__battery() {
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
                cmd="review__battery"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        review__battery)
            opts="-h --seat --judge --writer --brief --stage --writer-family --merge-seat --agree --max-rounds --run --help"
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
                --judge)
                    COMPREPLY=($(compgen -W "$(_panel_harnesses)" -- "${cur}"))
                    compopt -o nospace 2>/dev/null
                    return 0
                    ;;
                --writer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --brief)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --stage)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --writer-family)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --merge-seat)
                    COMPREPLY=($(compgen -W "$(_panel_harnesses)" -- "${cur}"))
                    compopt -o nospace 2>/dev/null
                    return 0
                    ;;
                --agree)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-rounds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --run)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
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
    complete -F _review__battery -o nosort -o bashdefault -o default review-battery
else
    complete -F _review__battery -o bashdefault -o default review-battery
fi
