import StemdeckLive
import StemdeckRemote
import StemdeckMixerView

/// Whose options `stemdeck help TOPIC` (or `stemdeck SUBCOMMAND --help`) shows.
public enum HelpTopic: String, Sendable, CaseIterable {
  case live, render, analyze, ctl, config

  /// The topic of a subcommand's `--help` (nil: the overview).
  package init?(_ mode: Arguments.Mode) {
    switch mode {
    case .render: self = .render
    case .analyze: self = .analyze
    case .ctl: self = .ctl
    case .config: self = .config
    default: return nil
    }
  }
}

/// The command line's help: an overview and one text a subcommand, each within 80 columns
/// (`ArgumentsTests`). The full reference is stemdeck(1) and docs/command-line.md.
extension Arguments {
  /// The help for `topic` (nil: the overview, with the live options).
  public static func help(_ topic: HelpTopic?) -> String {
    switch topic {
    case nil: usage
    case .live: liveHelp
    case .render: renderHelp
    case .analyze: analyzeHelp
    case .ctl: ctlHelp
    case .config: configHelp
    }
  }

  /// Every help text together: what the tests search for options.
  package static var allHelp: String { ([usage] + HelpTopic.allCases.map { help($0) }).joined(separator: "\n") }

  public static let usage = """
    stemdeck — a multi-track stem mixer console for JACK

    usage:
      stemdeck [SESSION] [options]       open SESSION live: interactive on a
                                         terminal, or a script (-c, --script, pipe)
      stemdeck render SESSION -o FILE    mix SESSION into an audio file (no JACK)
      stemdeck analyze SESSION | FILE…   measure loudness and peaks (no JACK)
      stemdeck ctl 'CMD; CMD'            run commands in a running stemdeck
      stemdeck config [options]          the settings in effect, and whence
      stemdeck help [TOPIC]              TOPIC: render, analyze, ctl, config, live
      stemdeck --help | --version

    \(liveOptions)
    Long options also take --opt=VALUE; -- ends the options.
    Type 'help' inside stemdeck for its commands; man stemdeck for everything.
    """

  static let liveHelp = """
    usage: stemdeck [SESSION] [options]

    Opens SESSION (or an empty session) live on a JACK server: interactive on a
    terminal, script mode with -c, --script or commands on a pipe.

    \(liveOptions)
    exit status: 0 done; 1 a script command failed, or the session, the JACK
    client or a socket could not be opened; 2 bad arguments; 130 a script stopped
    by a signal; 128+N the console ended by signal N (man stemdeck: EXIT STATUS)
    """

  static let liveOptions = """
    live options:
      -s, --server NAME        JACK server (default: $JACK_DEFAULT_SERVER, else
                               "default")
      -n, --name CLIENT        JACK client name (default: stemdeck)
      --no-start-server        do not start a JACK server when none is running
      --start-server DRIVER    when none runs, start one: dummy, alsa, net (a
                               NetJack2 slave finding its master by multicast),
                               net:MASTER_IP[:PORT]
      --no-connect             do not connect the master to the system outputs
      --play                   start playing once the session is open
      --mixer                  open the full-screen mixer view at once (on a
                               terminal; q goes to the prompt)
      --strict                 refuse a session whose audio files are missing
                               (default: open the rest, those stems offline)
      --script FILE            run commands from FILE (script mode)
      -c, --commands 'CMD; CMD'
                               run these commands (script mode)
      -k, --keep-going         in script mode, go on after a failed command (the
                               exit status is still 1)
      --json                   in script mode, one JSON object per command, as
                               the control socket replies
      -v, --verbose            show libjack's own messages on stderr
      --control PATH           the control socket (default:
                               $XDG_RUNTIME_DIR/stemdeck/CLIENT[@SERVER].sock)
      --no-control             no control socket
      --osc PORT               an OSC server on UDP PORT (off by default;
                               docs/remote-control.md)
      --osc-host HOST          the address it listens on (default 127.0.0.1:
                               this machine only; 0.0.0.0 opens it to the
                               network, where anyone can drive the mixer)
      --osc-allow mix|all      what OSC may do: mix (mix, transport, show;
                               default) or all (also files, quit, routing)
      --http PORT              the web mixer on TCP PORT (off by default;
                               docs/web.md)
      --http-host ADDR         the address it listens on (default 127.0.0.1;
                               any other needs the token it prints)
      --config FILE            settings from FILE (default:
                               $XDG_CONFIG_HOME/stemdeck/config; stemdeck help
                               config); these options win over it

    """

  static let configHelp = """
    usage: stemdeck config [live options]

    Prints every setting of the live console and ctl in effect, and where each
    came from: the command line, the configuration file (FILE:LINE) or the
    default. The output is itself a configuration file.

    The file is $XDG_CONFIG_HOME/stemdeck/config (~/.config/stemdeck/config), or
    --config FILE. One KEY = VALUE a line, # comments; a flag given on the
    command line wins over the file. An unknown key, a key given twice or a bad
    value is an error (FILE:LINE) and stemdeck does not start.

      server, name             as --server, --name
      start-server             auto, no, dummy, alsa, net, net:MASTER_IP[:PORT]
      server-rate              of a server stemdeck starts: 8000-192000 Hz
      server-period            its period, a power of two 16-8192 (default 256)
      server-periods           its periods per buffer, 2-16 (ALSA; default 2)
      connect                  yes or no (as --no-connect)
      control                  the control socket's path, or off
      osc, osc-host            the OSC server's UDP port (or off) and address
      osc-allow                what OSC may do: mix (default) or all
      http, http-host          the web mixer's TCP port (or off) and address
      autosave                 seconds between autosaves 1-3600, or off (30)
      history                  REPL history lines kept, 0-100000 (2000)
      color                    auto or never (as NO_COLOR)

    """

  static let renderHelp = """
    usage: stemdeck render SESSION --output FILE [options]

    Mixes SESSION into FILE through the live engine's own code, with no JACK
    server, and prints the file's levels (and loudness when normalised).

      -o, --output FILE        .wav (32-bit float), .flac or .aiff (24-bit), .ogg
                               (Ogg Vorbis) or .opus
      -f, --format NAME        wav16, wav24, wav32, float (WAV); flac16, flac24;
                               aiff16, aiff24; vorbis; opus (8, 12, 16, 24 or
                               48 kHz). It must fit FILE's extension
      --from TIME              start at this transport time (90, 1:30 or start;
                               default: the position saved in the session; away
                               from 0 the first 5 ms fade in)
      -d, --duration SECONDS   default: to the end of the longest finite stem
                               (required if a stem loops forever)
      -r, --sample-rate HZ     default: 48000
      --dither                 TPDF dither (±1 LSB) before rounding to 24 or 32
                               bits (on by default for 16 bits)
      --normalize LUFS         two passes: measure, then write with the gain that
                               brings the integrated loudness to LUFS (-60 to 0),
                               its true peak at most -1 dBTP
      --true-peak DBTP         with --normalize, another ceiling (-30 to 0): a
                               look-ahead true-peak limiter holds it
      --stems DIR              also every stem to DIR/NAME.EXT, sample-aligned
                               with the master; they sum to it
      --click FILE             also the click alone (count-in too) to FILE,
                               sample-aligned with the master
      --input NAME=FILE        FILE plays as live input NAME (or as an aux send's
                               return, SEND_return) from the first frame; a mono
                               file feeds both sides; repeat for more inputs
      -q, --quiet              no progress bar (it shows only on a terminal)

    exit status: 0 done; 1 failed (nothing is left behind); 2 bad arguments; 3
    written, but a stem was muted because its file holds NaN or infinite samples
    """

  static let analyzeHelp = """
    usage: stemdeck analyze SESSION [options]
           stemdeck analyze FILE… [--json] [--quiet]

    A session: its master measured as render would write it, without a file.
    Audio files: measured as they are (several make a table). Both print the
    integrated loudness (LUFS), loudness range (LU), true peak (dBTP) and sample
    peak (dBFS); a file also its samples at full scale.

      --from TIME              a session: start here (default: its saved position)
      -d, --duration SECONDS   a session: this long (default: to its end)
      -r, --sample-rate HZ     a session: at this rate (default: 48000)
      --input NAME=FILE        a session: FILE plays as live input NAME
      --json                   one JSON object a session or file, a line each
      -q, --quiet              no progress bar

    exit status: 0 measured; 1 the session or a file could not be; 2 bad
    arguments; 3 measured, but a stem was muted (NaN or infinite samples); 130
    stopped by a signal
    """

  static let ctlHelp = """
    usage: stemdeck ctl [options] 'CMD; CMD'

    Runs console commands in a running stemdeck through its control socket and
    prints the replies. With no --name, --server or --socket, and no stemdeck at
    the default socket, the only one running is taken.

      -n, --name CLIENT        the stemdeck to reach, by JACK client name
                               (default: stemdeck)
      -s, --server NAME        on this JACK server (default: $JACK_DEFAULT_SERVER,
                               else "default")
      --socket PATH            or by its control socket's path
      --list                   list the running stemdecks (their sockets answer)
      --json                   print the replies as JSON lines
      --watch TOPIC            follow pushed updates until interrupted: events,
                               meters, meters@RATE or transport (repeatable)
      --timeout SECONDS        give up on a stemdeck that does not take the
                               connection or answer within SECONDS (default 10;
                               a 'wait' waits as long as it asks, plus this)

    exit status: 0 done; 1 a command failed; 2 bad usage, no stemdeck, or busy
    """
}
