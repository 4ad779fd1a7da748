# bash completion for stemdeck: subcommands, options (each subcommand's own), option values
# (--format, --start-server, --watch, help topics) and files (sessions for a session, audio files
# and sessions for analyze). scripts/install puts it in share/bash-completion/completions.
# Its word lists are the program's own: CompletionFilesTests compares them with the option
# parser's and runs this function in bash.

_stemdeck() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=""
  [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
  local subcommands="render analyze ctl config help"
  local live_options="--server --name --no-start-server --start-server --no-connect --play --mixer --strict --script --commands --keep-going --json --verbose --control --no-control --osc --osc-host --osc-allow --http --http-host --config --help --version"
  local render_options="--output --format --from --duration --sample-rate --dither --normalize --true-peak --stems --click --input --quiet --help"
  local analyze_options="--from --duration --sample-rate --input --json --quiet --help"
  local ctl_options="--name --server --socket --list --json --watch --timeout --help"
  local formats="wav16 wav24 wav32 float flac16 flac24 aiff16 aiff24 vorbis opus"
  local drivers="dummy alsa net net:"
  local topics="render analyze ctl config live"
  local watch_topics="events meters transport"
  local audio='!*.@(wav|WAV|wave|flac|FLAC|aif|aiff|AIFF|aifc|caf|ogg|oga|opus|mp3|MP3|w64|rf64|json)'
  local mode=live
  case ${COMP_WORDS[1]:-} in
    render | analyze | ctl | config | help) mode=${COMP_WORDS[1]} ;;
  esac
  COMPREPLY=()
  case $prev in
    --format | -f) mapfile -t COMPREPLY < <(compgen -W "$formats" -- "$cur"); return ;;
    --start-server) mapfile -t COMPREPLY < <(compgen -W "$drivers" -- "$cur"); return ;;
    --watch) mapfile -t COMPREPLY < <(compgen -W "$watch_topics" -- "$cur"); return ;;
    --osc-allow) mapfile -t COMPREPLY < <(compgen -W "mix all" -- "$cur"); return ;;
    --output | -o | --script | --control | --socket | --config | --click)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    --stems) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
    --server | -s | --name | -n | --osc | --osc-host | --http | --http-host | --from | --duration | -d | --sample-rate | -r | \
      --normalize | --true-peak | --commands | -c | --input | --timeout)
      return ;;  # a value to type
  esac
  if [ "$mode" = help ]; then
    [ "$COMP_CWORD" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W "$topics" -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    local options=$live_options
    case $mode in
      render) options=$render_options ;;
      analyze) options=$analyze_options ;;
      ctl) options=$ctl_options ;;
    esac
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    return
  fi
  local -a files=() dirs=() words=()
  case $mode in
    ctl | config) return ;;  # the commands to run; config takes no file
    analyze) mapfile -t files < <(shopt -s extglob; compgen -f -X "$audio" -- "$cur") ;;
    *) mapfile -t files < <(compgen -f -X '!*.json' -- "$cur") ;;
  esac
  mapfile -t dirs < <(compgen -d -- "$cur")
  [ "$COMP_CWORD" -eq 1 ] && mapfile -t words < <(compgen -W "$subcommands" -- "$cur")
  COMPREPLY=("${words[@]}" "${files[@]}" "${dirs[@]}")
}
complete -o filenames -F _stemdeck stemdeck
