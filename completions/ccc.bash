_ccc() {
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
                cmd="ccc"
                ;;
            ccc,audit)
                cmd="ccc__subcmd__audit"
                ;;
            ccc,backup)
                cmd="ccc__subcmd__backup"
                ;;
            ccc,cat)
                cmd="ccc__subcmd__cat"
                ;;
            ccc,causal)
                cmd="ccc__subcmd__causal"
                ;;
            ccc,check)
                cmd="ccc__subcmd__check"
                ;;
            ccc,deltas)
                cmd="ccc__subcmd__deltas"
                ;;
            ccc,diff)
                cmd="ccc__subcmd__diff"
                ;;
            ccc,export)
                cmd="ccc__subcmd__export"
                ;;
            ccc,follow)
                cmd="ccc__subcmd__follow"
                ;;
            ccc,gc)
                cmd="ccc__subcmd__gc"
                ;;
            ccc,help)
                cmd="ccc__subcmd__help"
                ;;
            ccc,importmap)
                cmd="ccc__subcmd__importmap"
                ;;
            ccc,inspect)
                cmd="ccc__subcmd__inspect"
                ;;
            ccc,list)
                cmd="ccc__subcmd__ls"
                ;;
            ccc,ls)
                cmd="ccc__subcmd__ls"
                ;;
            ccc,publish)
                cmd="ccc__subcmd__publish"
                ;;
            ccc,recompress)
                cmd="ccc__subcmd__recompress"
                ;;
            ccc,rm)
                cmd="ccc__subcmd__rm"
                ;;
            ccc,serve)
                cmd="ccc__subcmd__serve"
                ;;
            ccc,site)
                cmd="ccc__subcmd__site"
                ;;
            ccc,tag)
                cmd="ccc__subcmd__tag"
                ;;
            ccc,token)
                cmd="ccc__subcmd__token"
                ;;
            ccc,verify)
                cmd="ccc__subcmd__verify"
                ;;
            ccc__subcmd__help,audit)
                cmd="ccc__subcmd__help__subcmd__audit"
                ;;
            ccc__subcmd__help,backup)
                cmd="ccc__subcmd__help__subcmd__backup"
                ;;
            ccc__subcmd__help,cat)
                cmd="ccc__subcmd__help__subcmd__cat"
                ;;
            ccc__subcmd__help,causal)
                cmd="ccc__subcmd__help__subcmd__causal"
                ;;
            ccc__subcmd__help,check)
                cmd="ccc__subcmd__help__subcmd__check"
                ;;
            ccc__subcmd__help,deltas)
                cmd="ccc__subcmd__help__subcmd__deltas"
                ;;
            ccc__subcmd__help,diff)
                cmd="ccc__subcmd__help__subcmd__diff"
                ;;
            ccc__subcmd__help,export)
                cmd="ccc__subcmd__help__subcmd__export"
                ;;
            ccc__subcmd__help,follow)
                cmd="ccc__subcmd__help__subcmd__follow"
                ;;
            ccc__subcmd__help,gc)
                cmd="ccc__subcmd__help__subcmd__gc"
                ;;
            ccc__subcmd__help,help)
                cmd="ccc__subcmd__help__subcmd__help"
                ;;
            ccc__subcmd__help,importmap)
                cmd="ccc__subcmd__help__subcmd__importmap"
                ;;
            ccc__subcmd__help,inspect)
                cmd="ccc__subcmd__help__subcmd__inspect"
                ;;
            ccc__subcmd__help,ls)
                cmd="ccc__subcmd__help__subcmd__ls"
                ;;
            ccc__subcmd__help,publish)
                cmd="ccc__subcmd__help__subcmd__publish"
                ;;
            ccc__subcmd__help,recompress)
                cmd="ccc__subcmd__help__subcmd__recompress"
                ;;
            ccc__subcmd__help,rm)
                cmd="ccc__subcmd__help__subcmd__rm"
                ;;
            ccc__subcmd__help,serve)
                cmd="ccc__subcmd__help__subcmd__serve"
                ;;
            ccc__subcmd__help,site)
                cmd="ccc__subcmd__help__subcmd__site"
                ;;
            ccc__subcmd__help,tag)
                cmd="ccc__subcmd__help__subcmd__tag"
                ;;
            ccc__subcmd__help,token)
                cmd="ccc__subcmd__help__subcmd__token"
                ;;
            ccc__subcmd__help,verify)
                cmd="ccc__subcmd__help__subcmd__verify"
                ;;
            ccc__subcmd__help__subcmd__site,ls)
                cmd="ccc__subcmd__help__subcmd__site__subcmd__ls"
                ;;
            ccc__subcmd__help__subcmd__site,rm)
                cmd="ccc__subcmd__help__subcmd__site__subcmd__rm"
                ;;
            ccc__subcmd__help__subcmd__site,set)
                cmd="ccc__subcmd__help__subcmd__site__subcmd__set"
                ;;
            ccc__subcmd__help__subcmd__tag,add)
                cmd="ccc__subcmd__help__subcmd__tag__subcmd__add"
                ;;
            ccc__subcmd__help__subcmd__tag,ls)
                cmd="ccc__subcmd__help__subcmd__tag__subcmd__ls"
                ;;
            ccc__subcmd__help__subcmd__tag,rm)
                cmd="ccc__subcmd__help__subcmd__tag__subcmd__rm"
                ;;
            ccc__subcmd__help__subcmd__token,create)
                cmd="ccc__subcmd__help__subcmd__token__subcmd__create"
                ;;
            ccc__subcmd__help__subcmd__token,ls)
                cmd="ccc__subcmd__help__subcmd__token__subcmd__ls"
                ;;
            ccc__subcmd__help__subcmd__token,revoke)
                cmd="ccc__subcmd__help__subcmd__token__subcmd__revoke"
                ;;
            ccc__subcmd__site,help)
                cmd="ccc__subcmd__site__subcmd__help"
                ;;
            ccc__subcmd__site,ls)
                cmd="ccc__subcmd__site__subcmd__ls"
                ;;
            ccc__subcmd__site,rm)
                cmd="ccc__subcmd__site__subcmd__rm"
                ;;
            ccc__subcmd__site,set)
                cmd="ccc__subcmd__site__subcmd__set"
                ;;
            ccc__subcmd__site__subcmd__help,help)
                cmd="ccc__subcmd__site__subcmd__help__subcmd__help"
                ;;
            ccc__subcmd__site__subcmd__help,ls)
                cmd="ccc__subcmd__site__subcmd__help__subcmd__ls"
                ;;
            ccc__subcmd__site__subcmd__help,rm)
                cmd="ccc__subcmd__site__subcmd__help__subcmd__rm"
                ;;
            ccc__subcmd__site__subcmd__help,set)
                cmd="ccc__subcmd__site__subcmd__help__subcmd__set"
                ;;
            ccc__subcmd__tag,add)
                cmd="ccc__subcmd__tag__subcmd__add"
                ;;
            ccc__subcmd__tag,help)
                cmd="ccc__subcmd__tag__subcmd__help"
                ;;
            ccc__subcmd__tag,ls)
                cmd="ccc__subcmd__tag__subcmd__ls"
                ;;
            ccc__subcmd__tag,rm)
                cmd="ccc__subcmd__tag__subcmd__rm"
                ;;
            ccc__subcmd__tag__subcmd__help,add)
                cmd="ccc__subcmd__tag__subcmd__help__subcmd__add"
                ;;
            ccc__subcmd__tag__subcmd__help,help)
                cmd="ccc__subcmd__tag__subcmd__help__subcmd__help"
                ;;
            ccc__subcmd__tag__subcmd__help,ls)
                cmd="ccc__subcmd__tag__subcmd__help__subcmd__ls"
                ;;
            ccc__subcmd__tag__subcmd__help,rm)
                cmd="ccc__subcmd__tag__subcmd__help__subcmd__rm"
                ;;
            ccc__subcmd__token,create)
                cmd="ccc__subcmd__token__subcmd__create"
                ;;
            ccc__subcmd__token,help)
                cmd="ccc__subcmd__token__subcmd__help"
                ;;
            ccc__subcmd__token,ls)
                cmd="ccc__subcmd__token__subcmd__ls"
                ;;
            ccc__subcmd__token,revoke)
                cmd="ccc__subcmd__token__subcmd__revoke"
                ;;
            ccc__subcmd__token__subcmd__help,create)
                cmd="ccc__subcmd__token__subcmd__help__subcmd__create"
                ;;
            ccc__subcmd__token__subcmd__help,help)
                cmd="ccc__subcmd__token__subcmd__help__subcmd__help"
                ;;
            ccc__subcmd__token__subcmd__help,ls)
                cmd="ccc__subcmd__token__subcmd__help__subcmd__ls"
                ;;
            ccc__subcmd__token__subcmd__help,revoke)
                cmd="ccc__subcmd__token__subcmd__help__subcmd__revoke"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        ccc)
            opts="-h -V --db --help --version publish ls list inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__audit)
            opts="-h -V --limit --since --token --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__backup)
            opts="-q -h -V --force --quiet --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__cat)
            opts="-h -V --gzip --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__causal)
            opts="-h -V --bind --port --threads --cache-capacity --cache-bytes --index-bytes --in-flight-bytes --log-misses --alias-max-age --not-found-max-age --max-lag --access-log --log-format --log-exclude --trust-proxy --max-connections --header-timeout --keepalive-timeout --send-timeout --body-timeout --shutdown-timeout --tls-cert --tls-key --redirect-http --acme-dir --publish-api --max-upload-size --max-unpacked-size --publish-wait --writer --stats-allow --reuse-port --sites --speedups --rounds --window --max-window --warmup --settle --min-delta --seed --load --urls --external-wake --site-clock --idle-cores --json-out --coz-out --coz-format --coz-append --ledger --strict --plot --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-capacity)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --in-flight-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alias-max-age)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --not-found-max-age)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-lag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "combined json" -- "${cur}"))
                    return 0
                    ;;
                --log-exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trust-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-connections)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keepalive-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --send-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --body-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shutdown-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redirect-http)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acme-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-upload-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-unpacked-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --publish-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --writer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stats-allow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sites)
                    COMPREPLY=($(compgen -W "cache-lookup cache-insert sqlite-query gzip-decode http-respond http-parse" -- "${cur}"))
                    return 0
                    ;;
                --speedups)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rounds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --warmup)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --settle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-delta)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --load)
                    COMPREPLY=($(compgen -W "builtin:8 external" -- "${cur}"))
                    return 0
                    ;;
                --urls)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --external-wake)
                    COMPREPLY=($(compgen -W "conn owe skip" -- "${cur}"))
                    return 0
                    ;;
                --site-clock)
                    COMPREPLY=($(compgen -W "wall cpu" -- "${cur}"))
                    return 0
                    ;;
                --idle-cores)
                    COMPREPLY=($(compgen -W "spin sleep" -- "${cur}"))
                    return 0
                    ;;
                --json-out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --coz-out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --coz-format)
                    COMPREPLY=($(compgen -W "tsv jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ledger)
                    COMPREPLY=($(compgen -W "summary full" -- "${cur}"))
                    return 0
                    ;;
                --plot)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__check)
            opts="-h -V --site --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__deltas)
            opts="-j -q -h -V --jobs --quiet --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__diff)
            opts="-h -V --limit --offset --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__export)
            opts="-h -V --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__follow)
            opts="-q -h -V --interval --once --quiet --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__gc)
            opts="-q -h -V --keep --keep-prereleases --delete-all-versions --older-than --dry-run --quiet --json --purge --purge-delay --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --keep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keep-prereleases)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --older-than)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --purge)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --purge-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__help)
            opts="publish ls inspect diff cat tag site rm gc deltas recompress verify check importmap backup follow serve token audit export causal help"
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
        ccc__subcmd__help__subcmd__audit)
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
        ccc__subcmd__help__subcmd__backup)
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
        ccc__subcmd__help__subcmd__cat)
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
        ccc__subcmd__help__subcmd__causal)
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
        ccc__subcmd__help__subcmd__check)
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
        ccc__subcmd__help__subcmd__deltas)
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
        ccc__subcmd__help__subcmd__diff)
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
        ccc__subcmd__help__subcmd__export)
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
        ccc__subcmd__help__subcmd__follow)
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
        ccc__subcmd__help__subcmd__gc)
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
        ccc__subcmd__help__subcmd__help)
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
        ccc__subcmd__help__subcmd__importmap)
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
        ccc__subcmd__help__subcmd__inspect)
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
        ccc__subcmd__help__subcmd__ls)
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
        ccc__subcmd__help__subcmd__publish)
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
        ccc__subcmd__help__subcmd__recompress)
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
        ccc__subcmd__help__subcmd__rm)
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
        ccc__subcmd__help__subcmd__serve)
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
        ccc__subcmd__help__subcmd__site)
            opts="set rm ls"
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
        ccc__subcmd__help__subcmd__site__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__site__subcmd__rm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__site__subcmd__set)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__tag)
            opts="add rm ls"
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
        ccc__subcmd__help__subcmd__tag__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__tag__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__tag__subcmd__rm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__token)
            opts="create ls revoke"
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
        ccc__subcmd__help__subcmd__token__subcmd__create)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__token__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__token__subcmd__revoke)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__help__subcmd__verify)
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
        ccc__subcmd__importmap)
            opts="-h -V --base --integrity --json --registry --offline --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__inspect)
            opts="-h -V --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__ls)
            opts="-h -V --limit --offset --json --names --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__publish)
            opts="-j -q -h -V --exclude --level --brotli-quality --force --tag --purge --purge-delay --dry-run --max-file-size --chunked-from --strict --no-check --importmap --integrity --base --no-deltas --max-unpacked-size --jobs --wait --no-create --quiet --json --to --token-file --ca-file --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --brotli-quality)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --purge)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --purge-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-file-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunked-from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-unpacked-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__recompress)
            opts="-j -q -h -V --jobs --quiet --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__rm)
            opts="-h -V --all --dry-run --json --purge --purge-delay --to --token-file --ca-file --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --purge)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --purge-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__serve)
            opts="-h -V --bind --port --threads --cache-capacity --cache-bytes --index-bytes --in-flight-bytes --log-misses --alias-max-age --not-found-max-age --max-lag --access-log --log-format --log-exclude --trust-proxy --max-connections --header-timeout --keepalive-timeout --send-timeout --body-timeout --shutdown-timeout --tls-cert --tls-key --redirect-http --acme-dir --publish-api --max-upload-size --max-unpacked-size --publish-wait --writer --stats-allow --reuse-port --no-recompress --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-capacity)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cache-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --in-flight-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alias-max-age)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --not-found-max-age)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-lag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-log)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-format)
                    COMPREPLY=($(compgen -W "combined json" -- "${cur}"))
                    return 0
                    ;;
                --log-exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trust-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-connections)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keepalive-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --send-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --body-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shutdown-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redirect-http)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acme-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-upload-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-unpacked-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --publish-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --writer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stats-allow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__site)
            opts="-h -V --db --help --version set rm ls help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__site__subcmd__help)
            opts="set rm ls help"
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
        ccc__subcmd__site__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__site__subcmd__help__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__site__subcmd__help__subcmd__rm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__site__subcmd__help__subcmd__set)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__site__subcmd__ls)
            opts="-h -V --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__site__subcmd__rm)
            opts="-h -V --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__site__subcmd__set)
            opts="-h -V --spa --clean-urls --hsts --skew-versions --skew-age --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --hsts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --skew-versions)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --skew-age)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__tag)
            opts="-h -V --to --token-file --ca-file --db --help --version add rm ls help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__tag__subcmd__add)
            opts="-h -V --to --token-file --ca-file --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__tag__subcmd__help)
            opts="add rm ls help"
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
        ccc__subcmd__tag__subcmd__help__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__tag__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__tag__subcmd__help__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__tag__subcmd__help__subcmd__rm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__tag__subcmd__ls)
            opts="-h -V --json --to --token-file --ca-file --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__tag__subcmd__rm)
            opts="-h -V --to --token-file --ca-file --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__token)
            opts="-h -V --db --help --version create ls revoke help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__token__subcmd__create)
            opts="-h -V --scope --expires --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --scope)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expires)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
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
        ccc__subcmd__token__subcmd__help)
            opts="create ls revoke help"
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
        ccc__subcmd__token__subcmd__help__subcmd__create)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__token__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__token__subcmd__help__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__token__subcmd__help__subcmd__revoke)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
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
        ccc__subcmd__token__subcmd__ls)
            opts="-h -V --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__token__subcmd__revoke)
            opts="-h -V --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
        ccc__subcmd__verify)
            opts="-q -h -V --quiet --json --db --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
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
    complete -F _ccc_with_catalog_names -o nosort -o bashdefault -o default ccc
else
    complete -F _ccc_with_catalog_names -o bashdefault -o default ccc
fi

# Names from the catalog for the arguments that name a package, a version
# or a file, read with `ccc ls --names` from the catalog this command line
# would open. Everything else is clap's completion above.
_ccc_with_catalog_names() {
    _ccc "$@"
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    [[ $cur == -* ]] && return 0
    case $prev in
        --access-log|--acme-dir|--alias-max-age|--base|--bind|--body-timeout|--brotli-quality|--ca-file|--cache-bytes|--cache-capacity|--chunked-from|--coz-format|--coz-out|--db|--exclude|--expires|--external-wake|--header-timeout|--hsts|--idle-cores|--in-flight-bytes|--index-bytes|--interval|--jobs|--json-out|--keep|--keep-prereleases|--keepalive-timeout|--ledger|--level|--limit|--load|--log-exclude|--log-format|--max-connections|--max-file-size|--max-lag|--max-unpacked-size|--max-upload-size|--max-window|--min-delta|--not-found-max-age|--offset|--older-than|--plot|--port|--publish-wait|--purge|--purge-delay|--redirect-http|--registry|--rounds|--scope|--seed|--send-timeout|--settle|--shutdown-timeout|--since|--site-clock|--sites|--skew-age|--skew-versions|--speedups|--stats-allow|--tag|--threads|--tls-cert|--tls-key|--to|--token|--token-file|--trust-proxy|--urls|--wait|--warmup|--window|--writer|-j) return 0 ;;
    esac
    local i word words=() db=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            --db) db=(--db "${COMP_WORDS[i + 1]}") ;;
            --db=*) db=("$word") ;;
        esac
        case $word in
            --access-log|--acme-dir|--alias-max-age|--base|--bind|--body-timeout|--brotli-quality|--ca-file|--cache-bytes|--cache-capacity|--chunked-from|--coz-format|--coz-out|--db|--exclude|--expires|--external-wake|--header-timeout|--hsts|--idle-cores|--in-flight-bytes|--index-bytes|--interval|--jobs|--json-out|--keep|--keep-prereleases|--keepalive-timeout|--ledger|--level|--limit|--load|--log-exclude|--log-format|--max-connections|--max-file-size|--max-lag|--max-unpacked-size|--max-upload-size|--max-window|--min-delta|--not-found-max-age|--offset|--older-than|--plot|--port|--publish-wait|--purge|--purge-delay|--redirect-http|--registry|--rounds|--scope|--seed|--send-timeout|--settle|--shutdown-timeout|--since|--site-clock|--sites|--skew-age|--skew-versions|--speedups|--stats-allow|--tag|--threads|--tls-cert|--tls-key|--to|--token|--token-file|--trust-proxy|--urls|--wait|--warmup|--window|--writer|-j) ((i++)) ;;
            -*) ;;
            *) words+=("$word") ;;
        esac
    done
    local most=0 depth
    for depth in 2 1; do
        ((${#words[@]} >= depth)) || continue
        case "${words[*]:0:depth}" in
        "ls") most=1 ;;
        "inspect") most=1 ;;
        "diff") most=2 ;;
        "cat") most=1 ;;
        "tag add") most=1 ;;
        "tag rm") most=1 ;;
        "tag ls") most=1 ;;
        "rm") most=99 ;;
        "gc") most=99 ;;
        "deltas") most=99 ;;
        "importmap") most=1 ;;
        "export") most=1 ;;
        esac
        ((most)) && break
    done
    ((most && ${#words[@]} - depth < most)) || return 0

    # PKG, PKG@VERSION or PKG@VERSION/PATH, PKG maybe @scope/name.
    local scope= rest=$cur listing=() prefix=
    if [[ $rest == @*/* ]]; then
        scope=${rest%%/*}/
        rest=${rest#*/}
    fi
    if [[ $cur == @* && $cur != */* ]] || [[ $rest != *@* ]]; then
        listing=()
    elif [[ ${rest#*@} != */* ]]; then
        listing=("$scope${rest%%@*}")
    else
        listing=("$scope${rest%%/*}")
        prefix=$scope${rest%%/*}/
    fi
    local names name found=()
    names=$("${COMP_WORDS[0]}" "${db[@]}" ls "${listing[@]}" --names 2>/dev/null) || return 0
    # Line by line: a name is never split or globbed.
    while IFS= read -r name; do
        [[ -n $name && $prefix$name == "$cur"* ]] && found+=("$prefix$name")
    done <<<"$names"
    ((${#found[@]})) && COMPREPLY=("${found[@]}")
    return 0
}
