# shellcheck shell=bash
# Shared code for the panel test stand-ins (see README.md).
# Sourced by every stand-in; pure bash on the hot path (no subprocesses
# except where noted) so a stand-in answers in a few milliseconds.

SI_VERSION_NOTE="panel-standin"
LC_ALL=C
# The HOME the caller gave us (logged as "home"). Like the real CLIs (os.homedir()),
# fall back to the passwd home directory when HOME is unset or empty.
SI_ENV_HOME=${HOME-}
if [[ -z ${HOME-} ]]; then unset HOME; HOME=~; fi

# ---------------------------------------------------------------- JSON
# si_q STRING  -> REPLY = JSON string literal (with quotes)
si_q() {
  if [[ $1 != *[\"\\$'\001'-$'\037'$'\177']* ]]; then REPLY="\"$1\""; return 0; fi
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  if [[ $s == *[$'\001'-$'\037'$'\177']* ]]; then
    local out='' c i n=${#s}
    for ((i = 0; i < n; i++)); do
      c=${s:i:1}
      case $c in
        [$'\001'-$'\037'$'\177'])
          printf -v c '\\u%04x' "'$c"
          out+=$c ;;
        *) out+=$c ;;
      esac
    done
    s=$out
  fi
  REPLY="\"$s\""
}

# si_qarr ARG... -> REPLY = JSON array of strings
si_qarr() {
  local out='' a
  for a in "$@"; do
    si_q "$a"
    out+=${out:+,}$REPLY
  done
  REPLY="[$out]"
}

si_uuid() { # REPLY = random uuid (kernel), no fork
  local u
  if [[ -r /proc/sys/kernel/random/uuid ]]; then
    read -r u </proc/sys/kernel/random/uuid
  else
    printf -v u '%04x%04x-%04x-4%03x-%04x-%04x%04x%04x' $RANDOM $RANDOM $RANDOM $((RANDOM % 4096)) \
      $(((RANDOM % 16384) | 32768)) $RANDOM $RANDOM $RANDOM
  fi
  REPLY=$u
}

si_now_ms() { # REPLY = epoch milliseconds
  local t=${EPOCHREALTIME/./}
  REPLY=${t:0:13}
}

si_iso() { # REPLY = ISO-8601 UTC timestamp with millis
  local ms=${EPOCHREALTIME#*.}
  printf -v REPLY '%(%Y-%m-%dT%H:%M:%S)T.%sZ' -1 "${ms:0:3}"
}

# si_looks_like_object TEXT: cheap (no jq) check that TEXT is a JSON object:
# trimmed, starts with { and ends with }, braces balanced outside strings is
# not checked (jq costs ~70 ms on a loaded box; keep the hot path fork-free).
si_looks_like_object() {
  local t=$1
  t=${t#"${t%%[![:space:]]*}"}; t=${t%"${t##*[![:space:]]}"}
  [[ $t == '{'*'}' ]]
}

# ---------------------------------------------------------------- errors
si_die() { # si_die CODE MESSAGE... (message to stderr)
  local code=$1; shift
  printf '%s\n' "$@" >&2
  exit "$code"
}

# ---------------------------------------------------------------- argv
# Generic option parser. The stand-in fills SI_SPEC before calling si_parse:
#   SI_SPEC[--name]=KIND   KIND: flag | val | optval | var | bool | pair
#     flag   no value
#     val    exactly one value (next arg, or --name=V, or -xV for short)
#     optval optional value: --name=V, or next arg if it does not start with -
#     var    variadic (commander/yargs array): next args up to the next -arg
#            (at least zero); --name=V gives one value
#     bool   yargs boolean: consumes a following "true"/"false"
#     pair   two values (llm -o KEY VALUE)
#   SI_ALIAS[-x]=--name    aliases (short flags, alternative spellings)
# Results: SI_OPT[--name]=last value ("1" for flags), SI_SEEN[--name]=count,
#   SI_REPEAT=("--name=value" ...) every occurrence in order, SI_POS=(...).
# Unknown options call cli_unknown_option ARG (must exit); a missing value
# calls cli_missing_value NAME.
declare -A SI_SPEC SI_ALIAS SI_OPT SI_SEEN
SI_REPEAT=()
SI_POS=()
SI_POS_AFTER_DDASH=0   # 1: options are recognised after positionals too (default)
si_parse() {
  local a name val kind has_eq
  while (($#)); do
    a=$1; shift
    if [[ $a == -- ]]; then
      SI_POS+=("$@"); break
    fi
    if [[ $a == -?* && $a != - ]]; then
      has_eq=0; val=
      if [[ $a == --*=* ]]; then
        name=${a%%=*}; val=${a#*=}; has_eq=1
      else
        name=$a
      fi
      [[ -n ${SI_ALIAS[$name]-} ]] && name=${SI_ALIAS[$name]}
      kind=${SI_SPEC[$name]-}
      if [[ -z $kind && $a != --* && ${#a} -gt 2 ]]; then
        # short option with attached value: -oFILE
        name=${a:0:2}
        [[ -n ${SI_ALIAS[$name]-} ]] && name=${SI_ALIAS[$name]}
        kind=${SI_SPEC[$name]-}
        if [[ $kind == val ]]; then
          val=${a:2}; val=${val#=}; has_eq=1
        else
          kind=
        fi
      fi
      if [[ -z $kind ]]; then
        cli_unknown_option "$a"; exit 2
      fi
      case $kind in
        flag)
          if ((has_eq)); then cli_unknown_option "$a"; exit 2; fi
          val=1 ;;
        bool)
          if ((!has_eq)); then
            if [[ ${1-} == true || ${1-} == false ]]; then val=$1; shift; else val=true; fi
          fi ;;
        val)
          if ((!has_eq)); then
            (($#)) || { cli_missing_value "$name"; exit 2; }
            val=$1; shift
          fi ;;
        optval)
          if ((!has_eq)); then
            if (($#)) && [[ $1 != -* ]]; then val=$1; shift; else val=; fi
          fi ;;
        var)
          if ((!has_eq)); then
            local vs=()
            while (($#)) && [[ $1 != -?* ]]; do vs+=("$1"); shift; done
            local IFS=' '
            val="${vs[*]}"
            local v
            for v in "${vs[@]}"; do SI_REPEAT+=("$name=$v"); done
            ((${#vs[@]})) || SI_REPEAT+=("$name=")
            SI_OPT[$name]=$val
            SI_SEEN[$name]=$((${SI_SEEN[$name]-0} + 1))
            continue
          fi ;;
        pair)
          (($# >= 2)) || { cli_missing_value "$name"; exit 2; }
          val="$1=$2"; shift 2 ;;
      esac
      SI_OPT[$name]=$val
      SI_SEEN[$name]=$((${SI_SEEN[$name]-0} + 1))
      SI_REPEAT+=("$name=$val")
    else
      SI_POS+=("$a")
    fi
  done
}
si_join() { # REPLY = args joined by one space
  local IFS=' '
  REPLY="$*"
}
si_has() { [[ -n ${SI_SEEN[$1]-} ]]; }

# ---------------------------------------------------------------- stdin
# SI_STDIN_KIND: devnull | pipe | file | tty | closed | other
si_stdin_kind() {
  local p=/proc/$$/fd/0
  if [[ ! -e $p && ! -L $p ]]; then SI_STDIN_KIND=closed
  elif [[ -t 0 ]]; then SI_STDIN_KIND=tty
  elif [[ $p -ef /dev/null ]]; then SI_STDIN_KIND=devnull
  elif [[ -p $p ]]; then SI_STDIN_KIND=pipe
  elif [[ -f $p ]]; then SI_STDIN_KIND=file
  else SI_STDIN_KIND=other
  fi
}
SI_STDIN_READ=0
SI_STDIN_TEXT=
# Read all of stdin (blocks until EOF, like the real CLIs that hang).
si_read_stdin_all() {
  SI_STDIN_READ=1
  SI_STDIN_TEXT=
  case $SI_STDIN_KIND in devnull|closed|tty) return 0 ;; esac
  local chunk
  while IFS= read -r -d '' chunk; do SI_STDIN_TEXT+=$chunk; done
  SI_STDIN_TEXT+=$chunk
  return 0
}
# claude: wait up to 3 s for the first byte on a pipe, then read to EOF.
si_read_stdin_claude() {
  SI_STDIN_READ=1
  SI_STDIN_TEXT=
  case $SI_STDIN_KIND in
    devnull|closed|tty) return 0 ;;
    pipe|other)
      local first rc
      IFS= read -r -N 1 -t "${STANDIN_STDIN_WAIT:-3}" first; rc=$?
      if ((rc > 128)); then
        printf '%s\n' 'Warning: no stdin data received in 3s, proceeding without it...' >&2
        return 0
      fi
      [[ -z $first ]] && return 0
      si_read_stdin_all
      SI_STDIN_TEXT=$first$SI_STDIN_TEXT ;;
    file) si_read_stdin_all ;;
  esac
}

# ---------------------------------------------------------------- logging
si_log_dir() { [[ -n ${STANDIN_LOG-} ]]; }
si_mkdir() { [[ -d $1 ]] || mkdir -p -- "$1" 2>/dev/null; }

# si_log  -- append one line to $STANDIN_LOG/calls.jsonl
# uses SI_CLI SI_ARGV SI_PROMPT SI_MODE SI_STDIN_KIND SI_STDIN_TEXT
SI_LOG_LIMIT=1024
si_log() {
  si_log_dir || return 0
  si_mkdir "$STANDIN_LOG"
  si_log_line "$SI_LOG_LIMIT"
  # keep every line below 4 KiB (one write(2), no interleaving between parallel callers)
  ((${#REPLY} < 4000)) || si_log_line 128
  printf '%s\n' "$REPLY" >>"$STANDIN_LOG/calls.jsonl"
}
# si_log_line LIMIT -> REPLY; values longer than LIMIT bytes go to $STANDIN_LOG/prompts/
si_log_line() {
  local limit=$1
  local pid=$$ pgid=0 st rest
  if read -r st </proc/$$/stat 2>/dev/null; then
    rest=${st##*) }
    local f=($rest)
    pgid=${f[2]}
  fi
  local args=() a i=0 pdir=$STANDIN_LOG/prompts extra=''
  # A pid alone does not name a call: each jail numbers its processes from 1.
  local tag="$pid.${SRANDOM:-$RANDOM$RANDOM}"
  for a in "${SI_ARGV[@]}"; do
    if ((${#a} > limit)); then
      si_mkdir "$pdir"
      printf '%s' "$a" >"$pdir/$tag.arg$i.txt"
      args+=("@file:$pdir/$tag.arg$i.txt")
    else
      args+=("$a")
    fi
    ((i++))
  done
  si_qarr "${args[@]}"; local jargv=$REPLY
  if ((${#SI_PROMPT} > limit)); then
    si_mkdir "$pdir"
    printf '%s' "$SI_PROMPT" >"$pdir/$tag.txt"
    si_q "$pdir/$tag.txt"; extra+=",\"promptFile\":$REPLY"
  else
    si_q "$SI_PROMPT"; extra+=",\"prompt\":$REPLY"
  fi
  if ((SI_STDIN_READ)); then
    if ((${#SI_STDIN_TEXT} > limit)); then
      si_mkdir "$pdir"
      printf '%s' "$SI_STDIN_TEXT" >"$pdir/$tag.stdin.txt"
      si_q "$pdir/$tag.stdin.txt"; extra+=",\"stdinFile\":$REPLY"
    else
      si_q "$SI_STDIN_TEXT"; extra+=",\"stdinText\":$REPLY"
    fi
  fi
  local env='' n v
  local -A seen=()
  for n in HOME XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME CODEX_HOME COPILOT_HOME \
    GEMINI_CLI_HOME CLAUDE_CONFIG_DIR TMPDIR \
    ${!ANTHROPIC_@} ${!OPENAI_@} ${!CLAUDE_@} ${!CODEX_@} ${!COPILOT_@} ${!GEMINI_@} ${!GOOGLE_@} \
    ${!QWEN_@} ${!KIMI_@} ${!OPENCODE_@} ${!CURSOR_@} ${!LLM_@} ${!DISABLE_@}; do
    [[ -n ${seen[$n]-} ]] && continue
    seen[$n]=1
    [[ ${!n@a} == *x* ]] || continue   # exported variables only
    v=${!n}
    if ((limit < 1024 && ${#v} > limit)); then
      si_mkdir "$pdir"
      printf '%s' "$v" >"$pdir/$tag.env.$n.txt"
      v="@file:$pdir/$tag.env.$n.txt"
    fi
    si_q "$v"; v=$REPLY
    si_q "$n"; env+=${env:+,}$REPLY:$v
  done
  si_q "$SI_CLI"; local jcli=$REPLY
  si_q "$PWD"; local jcwd=$REPLY
  si_q "$SI_ENV_HOME"; local jhome=$REPLY
  si_q "$SI_MODE"; local jmode=$REPLY
  si_now_ms; local ts=$REPLY
  REPLY="{\"cli\":$jcli,\"argv\":$jargv,\"cwd\":$jcwd,\"home\":$jhome,\"stdin\":\"$SI_STDIN_KIND\"$extra,\"mode\":$jmode,\"pid\":$pid,\"pgid\":$pgid,\"ts\":$ts,\"env\":{$env}}"
}

# ---------------------------------------------------------------- modes
# si_resolve_mode: sets SI_MODE (final, after rules / -once) and SI_MODE_RAW.
si_resolve_mode() {
  local mode=${STANDIN_MODE:-ok}
  if [[ -n ${STANDIN_RULES-} ]]; then
    local line sub m
    while IFS= read -r line; do
      [[ $line == *'=>'* ]] || continue
      sub=${line%%=>*}; m=${line#*=>}
      # trim surrounding whitespace of the mode
      m=${m#"${m%%[![:space:]]*}"}; m=${m%"${m##*[![:space:]]}"}
      [[ -z $sub ]] && continue
      if [[ $SI_PROMPT == *"$sub"* ]]; then mode=$m; break; fi
    done <<<"$STANDIN_RULES"
  fi
  SI_MODE_RAW=$mode
  if [[ $mode == *-once ]]; then
    local key=$SI_PROMPT
    if [[ $key == 'Your previous answer'* ]]; then key=
    elif [[ $key == *$'\n''Your previous answer'* ]]; then key=${key%%$'\n''Your previous answer'*}
    fi
    key=${key%"${key##*[![:space:]]}"}
    local dir
    if si_log_dir; then dir=$STANDIN_LOG/counters; else dir=${TMPDIR:-/tmp}/standin-counters; fi
    si_mkdir "$dir"
    local h
    h=$(printf '%s' "$SI_CLI:$key" | cksum)
    h=${h// /_}
    if mkdir "$dir/$h" 2>/dev/null; then
      mode=${mode%-once}
    else
      mode=${STANDIN_THEN:-ok}
    fi
  fi
  SI_MODE=$mode
}

# Verdict text for a "kind" (what the model said): REPLY
SI_VERDICT_OBJ=
si_verdict_obj() { # $1 verdict -> REPLY compact object
  si_q "${STANDIN_REASON:-IndexError on empty list}"
  local r=$REPLY
  si_q "$1"
  REPLY="{\"verdict\":$REPLY,\"reason\":$r,\"confidence\":${STANDIN_CONFIDENCE:-0.9}}"
}
# si_pairwise_obj first|second -> REPLY: a pairwise preference (panel-judge --contract pairwise).
si_pairwise_obj() {
  si_q "${STANDIN_REASON:-it answers the question}"
  REPLY="{\"preferred\":\"$1\",\"reason\":$REPLY,\"confidence\":${STANDIN_CONFIDENCE:-0.9}}"
}
# si_prefers TEXT -> REPLY first|second: the answer shown that holds TEXT (the first answer's
# fence ends before the second's begins), whichever order the two were shown in.
si_prefers() {
  local before=${SI_PROMPT%%'<<<SECOND-'*}
  before=${before#*'<<<FIRST-'}
  if [[ $before == *"$1"* ]]; then REPLY=first; else REPLY=second; fi
}
SI_PROSE='The claim breaks. Calling first([]) raises IndexError because the function indexes xs[0] without checking for an empty list, so it does not always return the first element.'
# si_model_text KIND -> SI_TEXT (text the model produced), SI_OBJ (object if JSON)
si_model_text() {
  local v=${STANDIN_VERDICT:-breaks}
  case $1 in
    holds|breaks) v=$1; si_verdict_obj "$v"; SI_TEXT=$REPLY; SI_OBJ=$REPLY ;;
    first|second) si_pairwise_obj "$1"; SI_TEXT=$REPLY; SI_OBJ=$REPLY ;;
    prefer:*) si_prefers "${1#prefer:}"; si_pairwise_obj "$REPLY"; SI_TEXT=$REPLY; SI_OBJ=$REPLY ;;
    ok|validfail) si_verdict_obj "$v"; SI_TEXT=$REPLY; SI_OBJ=$REPLY ;;
    prose) SI_TEXT=$SI_PROSE; SI_OBJ= ;;
    empty) SI_TEXT=; SI_OBJ= ;;
    fence) si_verdict_obj "$v"; SI_TEXT=$'```json\n'"$REPLY"$'\n```'; SI_OBJ= ;;
    invalid)
      si_q "${STANDIN_REASON:-IndexError on empty list}"
      SI_TEXT="{\"verdict\":\"maybe\",\"reason\":$REPLY,\"confidence\":0.9}"; SI_OBJ=$SI_TEXT ;;
    wrongschema) SI_TEXT='{"answer":"yes"}'; SI_OBJ=$SI_TEXT ;;
  esac
}

# si_run: the common mode dispatcher. The stand-in defines:
#   cli_answer KIND           print the answer (KIND: ok prose fence invalid wrongschema empty)
#   cli_fail | cli_error0 | cli_usage_limit [VARIANT] | cli_rate_limit   (each exits)
#   SI_FAIL_CODE              exit code for validfail (default 1)
# si_file_has FILE TEXT: FILE is readable and holds TEXT.
si_file_has() {
  local t
  [[ -r $1 ]] || return 1
  IFS= read -r -d '' t <"$1"
  [[ $t == *"$2"* ]]
}

# si_hostile: what a hostile judge does before it answers, one action a line of STANDIN_DO:
#   link PATH TARGET   replace $HOME/PATH with a symbolic link to TARGET
#   write PATH TEXT    write TEXT into $HOME/PATH (its backslash escapes read as printf's %b)
#   show PATH          print $HOME/PATH on stderr
#   connect HOST:PORT  ask its proxy ($HTTPS_PROXY) for a tunnel; the answer's status line goes
#                      to stderr as `standin: connect HOST:PORT: STATUS`
#   look               write what it can see of itself to $STANDIN_LOG/looks/ (si_look)
si_hostile() {
  [[ -n ${STANDIN_DO-} ]] || return 0
  local line verb a b
  while IFS= read -r line; do
    read -r verb a b <<<"$line"
    case $verb in
      link) rm -rf -- "${HOME:?}/$a"; mkdir -p -- "$(dirname -- "$HOME/$a")"; ln -s -- "$b" "$HOME/$a" ;;
      write) mkdir -p -- "$(dirname -- "$HOME/$a")"; printf '%b\n' "$b" > "$HOME/$a" ;;
      show) cat -- "$HOME/$a" >&2; echo >&2 ;;
      connect)
        local proxy=${HTTPS_PROXY#http://}; proxy=${proxy%%/*}
        local status='no proxy'
        if [[ -n $proxy ]] && exec 7<>"/dev/tcp/${proxy%:*}/${proxy##*:}"; then
          printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$a" "$a" >&7
          IFS= read -r -t 20 status <&7 || status='no answer'
          exec 7>&-
        fi
        printf 'standin: connect %s: %s\n' "$a" "${status%$'\r'}" >&2 ;;
      look) si_look ;;
    esac
  done <<<"$STANDIN_DO"
}

# si_look: everything a judge can see of itself, one file a call in $STANDIN_LOG/looks/: its
# working folder, argv, stdin, environment, host and ids, mount points, and every name and text
# under its private folder (the parent of its HOME); first, the order it was shown two answers
# in (`order: AB` or `BA`) when any of that names it (a `.ab.` or `.ba/` in a path), else
# `order: unknown`.
si_look() {
  local view='' f t n private=${HOME%/*} re='\.(ab|ba)[./]'
  view+="cwd: $PWD"$'\n'
  for t in "${SI_ARGV[@]}"; do view+="arg: $t"$'\n'; done
  view+="stdin: $SI_STDIN_TEXT"$'\n'
  for n in $(compgen -e | sort); do
    [[ $n == _ ]] || view+="env: $n=${!n}"$'\n'
  done
  view+="host: ${HOSTNAME-} uid $UID euid $EUID"$'\n'
  if [[ -r /proc/self/mountinfo ]]; then
    while read -r _ _ _ _ t _; do view+="mount: $t"$'\n'; done </proc/self/mountinfo
  fi
  local old; old=$(shopt -p globstar dotglob nullglob)
  shopt -s globstar dotglob nullglob
  for f in "$private"/**; do
    n=${f#"$private"}
    if [[ -L $f ]]; then view+="link: $n -> $(readlink -- "$f")"$'\n'
    elif [[ -d $f ]]; then view+="folder: $n"$'\n'
    elif [[ -f $f && -r $f ]]; then
      t=; IFS= read -r -d '' t <"$f"
      view+="file: $n (${#t} chars): $t"$'\n'
    else view+="other: $n"$'\n'
    fi
  done
  eval "$old"
  local order=unknown
  if [[ $view =~ $re ]]; then order=${BASH_REMATCH[1]^^}; fi
  si_mkdir "$STANDIN_LOG/looks"
  printf 'order: %s\n%s' "$order" "$view" >"$STANDIN_LOG/looks/$$.${SRANDOM:-$RANDOM$RANDOM}.txt"
}

si_run() {
  si_hostile
  local mode=$SI_MODE
  # Answer only when the CLI's lockdown is in place, as panel gives it (flags, its config files
  # under the private HOME, its environment): cli_lockdown sets REPLY to what is missing. On
  # unless STANDIN_LOCKDOWN=off, for a caller that passes other flags on purpose.
  if [[ ${STANDIN_LOCKDOWN:-check} != off ]] && declare -F cli_lockdown >/dev/null; then
    REPLY=
    cli_lockdown || si_die 9 "standin: $SI_CLI: lockdown missing: $REPLY"
  fi
  case $mode in
    sleep:*)
      sleep "${mode#sleep:}"
      mode=ok ;;
    waitfor:*)
      while [[ ! -e ${mode#waitfor:} ]]; do sleep 0.05; done
      mode=ok ;;
    linger:*)
      # A reviewer that takes its time: a process out of its group (setsid) and itself append
      # their pids to $STANDIN_LOG/lingering, then it sleeps $STANDIN_SLEEP and goes on as MODE.
      setsid sleep "${STANDIN_SLEEP:-100000}" </dev/null >/dev/null 2>&1 &
      printf '%s\n%s\n' "$!" "$$" >>"$STANDIN_LOG/lingering"
      sleep "${STANDIN_SLEEP:-100000}"
      mode=${mode#linger:} ;;
    after-linger:*)
      while [[ ! -s $STANDIN_LOG/lingering ]]; do sleep 0.05; done
      mode=${mode#after-linger:} ;;
  esac
  case $mode in
    ok|holds|breaks|prose|fence|invalid|wrongschema|empty)
      si_model_text "$mode"; cli_answer "$mode"; exit 0 ;;
    first|second|prefer:*)
      si_model_text "$mode"; cli_answer ok; exit 0 ;;
    validfail)
      si_model_text ok; cli_answer ok; exit "${SI_FAIL_CODE:-1}" ;;
    fail) cli_fail ;;
    error0) cli_error0 ;;
    usage-limit|usage-limit2) cli_usage_limit "$mode" ;;
    rate-limit) cli_rate_limit ;;
    flood)
      head -c 104857600 /dev/zero | tr '\0' x
      exit 0 ;;
    transcript:*)
      # A whole transcript, already in the CLI's own shape (a test writes it), as stdout.
      cat -- "${mode#transcript:}"
      exit 0 ;;
    hang) exec sleep "${STANDIN_SLEEP:-100000}" ;;
    grandchild|grandchild-exit)
      sleep "${STANDIN_SLEEP:-100000}" &
      local gc=$!
      if si_log_dir; then printf '%s\n' "$gc" >>"$STANDIN_LOG/grandchildren"; fi
      if [[ $mode == grandchild ]]; then
        exec sleep "${STANDIN_SLEEP:-100000}"
      fi
      si_model_text ok; cli_answer ok; exit 0 ;;
    escaped|escaped-holder)
      # A process that leaves the stand-in's session and process group (setsid), with the
      # stand-in's stdout (escaped-holder) or without it; the stand-in answers and exits.
      if [[ $mode == escaped ]]; then
        setsid sleep "${STANDIN_SLEEP:-100000}" </dev/null >/dev/null 2>&1 &
      else
        setsid sleep "${STANDIN_SLEEP:-100000}" </dev/null &
      fi
      local gc=$!
      if si_log_dir; then printf '%s\n' "$gc" >>"$STANDIN_LOG/grandchildren"; fi
      si_model_text ok; cli_answer ok; exit 0 ;;
    killed) kill -9 $$; exit 137 ;;
    review-read|review-read:*|review-blind|review-blind:*|review-write|review-write:*)
      si_review "$mode"; exit 0 ;;
    *)
      printf 'standin: unknown STANDIN_MODE %q\n' "$mode" >&2
      exit 3 ;;
  esac
}

# ---------------------------------------------------------------- reviewers
# si_review MODE: a PR reviewer in its checkout (the working folder). review-read reads a file
# first (SI_READ_FILE, SI_READ_TEXT), review-blind answers without looking, review-write also
# appends a line to a file of the checkout. The reply is the file after the colon, else
# $STANDIN_REPLY. The CLI's cli_review KIND REPLY prints it in its event-stream shape.
si_review() {
  local mode=$1 kind=${1%%:*} reply=${STANDIN_REPLY-}
  if [[ $mode == *:* ]]; then
    IFS= read -r -d '' reply <"${mode#*:}"
  fi
  SI_READ_FILE= SI_READ_TEXT=
  if [[ $kind != review-blind ]]; then
    local f
    SI_READ_FILE=${STANDIN_READ-}
    if [[ -z $SI_READ_FILE ]]; then
      for f in *; do [[ -f $f ]] && { SI_READ_FILE=$f; break; }; done
    fi
    [[ -n $SI_READ_FILE && -r $SI_READ_FILE ]] && IFS= read -r -d '' SI_READ_TEXT <"$SI_READ_FILE"
    SI_READ_TEXT=${SI_READ_TEXT:0:2000}
  fi
  if [[ $kind == review-write ]]; then
    printf 'a reviewer wrote this\n' >>"${SI_READ_FILE:-standin-wrote.txt}"
  fi
  cli_review "$kind" "$reply"
}

# ---------------------------------------------------------------- state
si_write_if_missing() { # PATH CONTENT
  [[ -e $1 ]] || printf '%s\n' "$2" >"$1"
}
