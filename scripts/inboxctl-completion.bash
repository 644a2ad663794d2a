# bash completion for inboxctl: subcommands, their options, handler identifiers and type identifiers.
# scripts/setup installs it as /usr/share/bash-completion/completions/inboxctl; to try it from a checkout:
#   source scripts/inboxctl-completion.bash
# Every list is asked of inboxctl itself (its help, `inboxctl handlers`, `inboxctl types`), so the completion
# never falls behind the tool, and options given so far (--handlers, --config, ...) are passed on.

_inboxctl_subcommands() {
    "$1" --help 2>/dev/null | sed -n '/^SUBCOMMANDS:/,/^$/{s/^  \([a-z][a-z-]*\) .*/\1/p}'
}

_inboxctl_options() {
    "$1" help "$2" 2>/dev/null | sed -n '/^OPTIONS:/,/^$/p' | grep -o -- '--[a-z][a-z-]*' | sort -u
}

# The words an option's help row lists as its values ("normal, large, x-large or xx-large (repeatable; ...)").
_inboxctl_values() {
    "$1" help "$2" 2>/dev/null | sed -n '/^OPTIONS:/,/^$/p' | sed -n "s/^ *$3 [A-Z]* *//p" | sed 's/ *(.*//' |
        tr -s ', ' '\n\n' | grep -vx 'or'
}

# The handler identifiers of the registrations the agent options given so far name.
_inboxctl_handlers() {
    local tool=$1
    shift
    "$tool" handlers "$@" 2>/dev/null | awk '/^[^ ]/ {print $1}'
}

# `options --do ACTION[=ARG]`: the actions, then the argument of the one before '=' (bash splits the word there
# by default, COMP_WORDBREAKS; a word that holds the '=' is completed whole).
_inboxctl_do() {
    local tool=$1 kind=$2 cur=$3 prefix=$4
    shift 4
    local -a words=()
    case $kind in
        "")
            mapfile -t COMPREPLY < <(compgen -W "quicklook open= print print= copy copy= send=" -- "$cur")
            [[ ${COMPREPLY[*]} == *= ]] && compopt -o nospace 2>/dev/null
            return
            ;;
        open) mapfile -t words < <(_inboxctl_handlers "$tool" "$@") ;;
        print) mapfile -t words < <(lpstat -e 2>/dev/null) ;;
        copy | send) mapfile -t words < <(compgen -d -- "$cur") ;;
    esac
    mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "${words[*]}" -- "$cur")
}

_inboxctl() {
    local tool=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local subcommand="" i
    local -a agent_options=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --config | --handlers | --state | --runtime-dir | --defaults | --inbox)
                agent_options+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}")
                ((i++))
                ;;
            --system | --user) agent_options+=("${COMP_WORDS[i]}") ;;
            -*) ;;
            *) [[ -z $subcommand ]] && subcommand=${COMP_WORDS[i]} ;;
        esac
    done

    if [[ -z $subcommand ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_inboxctl_subcommands "$tool") help --help --version" -- "$cur")
        return
    fi
    case $prev in
        --config | --defaults | --annotation-file) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
        --handlers | --state | --runtime-dir | --inbox | --to)
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
            return
            ;;
        --output)
            # preview writes its pages into a directory; metrics writes one file.
            if [[ $subcommand == metrics ]]; then
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -d -- "$cur")
            fi
            return
            ;;
        --printer)
            # The CUPS destinations (lpstat -e): what lp -d takes.
            mapfile -t COMPREPLY < <(compgen -W "$(lpstat -e 2>/dev/null)" -- "$cur")
            return
            ;;
        --size)
            # thumbnail's sizes are names; preview's is a number of pixels (nothing to offer).
            COMPREPLY=()
            [[ $subcommand == thumbnail ]] &&
                mapfile -t COMPREPLY < <(compgen -W "$(_inboxctl_values "$tool" thumbnail --size)" -- "$cur")
            return
            ;;
        --title | --pages | -n) COMPREPLY=(); return ;;
        --with | --handler)
            mapfile -t COMPREPLY < <(compgen -W "$(_inboxctl_handlers "$tool" "${agent_options[@]}")" -- "$cur")
            return
            ;;
        --do)
            if [[ $cur == *=* ]]; then
                _inboxctl_do "$tool" "${cur%%=*}" "${cur#*=}" "${cur%%=*}=" "${agent_options[@]}"
            else
                _inboxctl_do "$tool" "" "$cur" "" "${agent_options[@]}"
            fi
            return
            ;;
        =)
            if ((COMP_CWORD >= 3)) && [[ ${COMP_WORDS[COMP_CWORD - 3]} == --do ]]; then
                _inboxctl_do "$tool" "${COMP_WORDS[COMP_CWORD - 2]}" "$cur" "" "${agent_options[@]}"
                return
            fi
            ;;
        --type)
            mapfile -t COMPREPLY < <(compgen -W "$("$tool" types "${agent_options[@]}" 2>/dev/null |
                awk '{print $1}')" -- "$cur")
            return
            ;;
    esac
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_inboxctl_options "$tool" "$subcommand") --help" -- "$cur")
        return
    fi
    case $subcommand in
        help) mapfile -t COMPREPLY < <(compgen -W "$(_inboxctl_subcommands "$tool")" -- "$cur") ;;
        list) mapfile -t COMPREPLY < <(compgen -W "failed unhandled" -- "$cur") ;;
        metrics) COMPREPLY=() ;;
        types)
            mapfile -t COMPREPLY < <(compgen -W "$("$tool" types "${agent_options[@]}" 2>/dev/null |
                awk '{print $1}')" -- "$cur")
            ;;
        *) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    esac
}

complete -o filenames -F _inboxctl inboxctl
