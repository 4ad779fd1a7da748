// swift-tools-version:6.0
// stemdeck: a JACK multi-track stem mixer console for Linux.
// Licence: GPL-3.0-or-later (see LICENSE); it links Rubber Band (GPL-2.0-or-later).
//
// Layout (what each target may touch; threads, rings and the realtime contract: docs/architecture.md):
//   C*                  thin system-library targets (pkg-config; CMalloc is glibc's malloc.h; CNcurses links
//                       ncursesw itself, see below), no Swift code.
//   StemdeckRing        the wait-free SPSC ring buffer (generic, no dependencies).
//   StemdeckEngine      realtime DSP (DSP/: smoothing, pan law, meters) and the block renderer
//                       (Renderer/: voices, renderBlock; not the control-thread Mixer).
//                       Its only C libraries are libsamplerate, Rubber Band and zita-resampler; no JACK, no
//                       libsndfile, no Foundation I/O.
//   StemdeckAudioFile   libsndfile owner (SoundFile, SoundFileWriter), the disk workers (DiskStreamer)
//                       and the take writer (TakeRecorder): the non-realtime ends of the renderer's rings.
//   StemdeckText        text every layer shows: user text made safe, suggestions, number formatting, file
//                       names that are not UTF-8 (a leaf: no stemdeck dependencies).
//   StemdeckSession     the session file format: strict JSON reader, validation, migration, atomic save;
//                       every setting's rules (SettingRule, NameRules) and dB conversion, used by all layers.
//   StemdeckControl     the control-thread engine API (Mixer) that the REPL, the session loader,
//                       the offline renderer and the tests all drive.
//   StemdeckJack        the JACK client: ports, the process and timebase callbacks (the realtime
//                       C entries), JACK's other callbacks, routing, server launcher. It owns no
//                       mixer: it runs a `JackHost`'s render state and registers the ports its
//                       `PortPlan` asks for (the live session is the host); no StemdeckControl.
//   StemdeckLive        the live session (owns the mixer; the JACK driver's host) and the command
//                       interpreter every front end drives: commands, replies, words, groups, waits.
//   StemdeckRemote      front ends over the network: control socket, OSC, NSM, the web mixer.
//   StemdeckMixerView   the full-screen mixer view (ncursesw).
//   StemdeckConsole     the program: arguments and modes (App/), the REPL and script mode (REPL/:
//                       line editor, history, completion), and the wiring of the front ends.
//                       The front ends depend on StemdeckLive, never on each other.
//   StemdeckVersion     the version string only (VERSION and git, via Plugins/StemdeckVersionPlugin).
//   stemdeck            the executable's entry point (main.swift hands argv to StemdeckConsole).
import PackageDescription

// STEMDECK_TEST_TARGETS=threaded (scripts/test's ThreadSanitizer build): only the test targets
// whose code has more than one thread, which that build runs (the ring, the engine, the audio-file
// workers, the control layer), and every product; the console's, the session format's and the
// integration harness's tests are left out of it: some 20,000 lines it would compile for nothing.
let threadedTestsOnly = Context.environment["STEMDECK_TEST_TARGETS"] == "threaded"
let unthreadedTestTargets: Set = ["StemdeckConsoleTests", "IntegrationTests", "StemdeckSessionTests"]

let package = Package(
  name: "stemdeck",
  products: [
    .executable(name: "stemdeck", targets: ["stemdeck"]),
    // A JACK stand-in for a sound card's outside world (declared latencies, clicks on transport
    // frames): the overdub alignment tests use it, and it checks a setup by hand.
    .executable(name: "stemdeck-testrig", targets: ["stemdeck-testrig"]),
    .executable(name: "stemdeck-dsp-bench", targets: ["stemdeck-dsp-bench"])
  ],
  targets: [
    .systemLibrary(name: "CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
    .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
    .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
    .systemLibrary(name: "CEditLine", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),
    .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband", providers: [.apt(["librubberband-dev"])]),
    // EBU R 128 loudness (integrated, range, true peak) for `analyze` and `render --normalize`;
    // offline only, never on the realtime thread.
    .systemLibrary(name: "CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
    // glibc's malloc.h (malloc_trim, mallinfo2), which Swift's Glibc module leaves out: the
    // `debug heap` diagnostic measures the process's memory from inside.
    .systemLibrary(name: "CMalloc"),
    // A header only: `render --stems`' interleave into the stem writer's chunk with
    // non-temporal stores, which Swift cannot express (docs/architecture.md, *Offline render*).
    .systemLibrary(name: "CStream"),
    // DSP kernels for AVX2 and FMA, chosen at run time (the resampler's steady mode).
    .systemLibrary(name: "CKernels"),
    // liblo: OSC messages encoded and decoded for the OSC server and the NSM client (control
    // thread only; stemdeck owns the UDP sockets, see docs/architecture.md, *Remote control*).
    .systemLibrary(name: "CLiblo", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),
    // ncursesw for the full-screen mixer view (`mixer`, `--mixer`; StemdeckConsole/MixerView).
    // No pkgConfig: ncursesw.pc adds -D_DEFAULT_SOURCE -D_XOPEN_SOURCE=600, which SwiftPM
    // prohibits (a warning on every build); the module map links ncursesw and tinfo itself.
    .systemLibrary(name: "CNcurses", providers: [.apt(["libncurses-dev"])]),
    // libwebsockets: the web mixer's HTTP and WebSocket server (`--http PORT`), on a thread of
    // its own that never touches the mixer (StemdeckConsole/Remote/WebServer.swift).
    .systemLibrary(name: "CWebSockets", pkgConfig: "libwebsockets", providers: [.apt(["libwebsockets-dev"])]),
    // lilv: LV2 plugin inserts (discovery, instances) on the control thread; the renderer calls
    // only a plugin's own `run` (docs/architecture.md, *Plugin inserts*).
    .systemLibrary(name: "CLilv", pkgConfig: "lilv-0", providers: [.apt(["liblilv-dev", "lv2-dev"])]),
    // soxr: the `medium` and `best` qualities' file-rate conversion on the disk side (a disk
    // worker's thread, never the realtime one; docs/architecture.md, *File-rate conversion on the
    // disk side*).
    .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
    // zita-resampler's VResampler behind a C interface (a C++ shim: Swift does not import its
    // class): the `fast` quality's converter for a stem that holds a varispeed rate, made and
    // freed on the control thread, run on the realtime one (docs/architecture.md, *Resampling*).
    .target(name: "CZita", linkerSettings: [.linkedLibrary("zita-resampler")]),
    // The SPSC ring is its own module so that its @inlinable generic bodies are serialized and
    // can be specialized into the engine in every build configuration.
    .target(name: "StemdeckRing"),
    // The engine is always compiled optimized: the realtime checker (@_noLocks) can prove generic
    // ring calls free of locks only once they are specialized, which -Onone does not do.
    // It also keeps debug-build test runs of the DSP at realistic speed.
    .target(
      name: "StemdeckEngine", dependencies: ["StemdeckRing", "CSampleRate", "CRubberBand", "CKernels", "CZita"],
      swiftSettings: [.unsafeFlags(["-O"])]),
    // Text every layer shows: safe user text, suggestions, numbers, names that are not UTF-8.
    .target(name: "StemdeckText"),
    .target(
      name: "StemdeckAudioFile", dependencies: ["StemdeckEngine", "StemdeckSession", "StemdeckText", "CSndFile", "CSoxr"]),
    .target(name: "StemdeckSession", dependencies: ["StemdeckText"]),
    .target(
      name: "StemdeckControl",
      dependencies: [
        "StemdeckEngine", "StemdeckAudioFile", "StemdeckSession", "StemdeckText", "CSampleRate", "CMalloc", "CEbur128",
        "CStream", "CLilv"
      ]),
    .target(name: "StemdeckJack", dependencies: ["StemdeckEngine", "StemdeckSession", "StemdeckText", "CJack"]),
    // The version string (VERSION and git, written by scripts/version before every build); a
    // module of its own, so that a new commit relinks and recompiles nothing else.
    .plugin(name: "StemdeckVersionPlugin", capability: .buildTool()),
    .target(name: "StemdeckVersion", plugins: ["StemdeckVersionPlugin"]),
    // The live session (it owns the mixer and is the JACK driver's host) and the command
    // interpreter every front end drives (`Console`): commands, their replies and words, groups,
    // waits, the setlist, who may do what, the control loop and the `FrontEnd` protocol.
    .target(
      name: "StemdeckLive",
      dependencies: [
        "StemdeckControl", "StemdeckJack", "StemdeckSession", "StemdeckAudioFile", "StemdeckEngine", "StemdeckText"
      ]),
    // The remote front ends: the control socket, OSC, the session manager (NSM) and the web mixer.
    .target(
      name: "StemdeckRemote",
      dependencies: [
        "StemdeckLive", "StemdeckControl", "StemdeckJack", "StemdeckSession", "StemdeckEngine", "StemdeckText", "CLiblo",
        "CWebSockets"
      ]),
    // The full-screen mixer view (ncursesw).
    .target(
      name: "StemdeckMixerView",
      dependencies: ["StemdeckLive", "StemdeckControl", "StemdeckSession", "StemdeckText", "CNcurses"]),
    // The program: arguments and modes (App/), the REPL and script front end (REPL/), and the
    // wiring of the live session to its front ends.
    .target(
      name: "StemdeckConsole",
      dependencies: [
        "StemdeckLive", "StemdeckRemote", "StemdeckMixerView", "StemdeckControl", "StemdeckJack", "StemdeckSession",
        "StemdeckAudioFile", "StemdeckEngine", "StemdeckText", "StemdeckVersion", "CEditLine"
      ]),
    .executableTarget(name: "stemdeck", dependencies: ["StemdeckConsole"]),
    .executableTarget(name: "stemdeck-testrig", dependencies: ["CJack"]),
    // scripts/bench's case 1r: stemdeck's own converters timed on raw audio, beside the libraries.
    .executableTarget(
      name: "stemdeck-dsp-bench", dependencies: ["StemdeckEngine"],
      swiftSettings: [.unsafeFlags(["-O"])]),
    // What every test target shares (temporary folders, the seeded generator, WAV files written
    // byte by byte, a process runner with a timeout, the monotonic clock); no production module.
    .target(name: "StemdeckTestSupport", path: "Tests/StemdeckTestSupport"),
    .testTarget(name: "StemdeckRingTests", dependencies: ["StemdeckRing"]),
    .testTarget(name: "StemdeckEngineTests", dependencies: ["StemdeckEngine", "StemdeckRing", "CSampleRate"]),
    .testTarget(name: "StemdeckAudioFileTests", dependencies: ["StemdeckAudioFile", "StemdeckText", "StemdeckTestSupport"]),
    .testTarget(
      name: "StemdeckControlTests",
      dependencies: [
        "StemdeckControl", "StemdeckAudioFile", "StemdeckSession", "StemdeckEngine", "StemdeckText", "StemdeckTestSupport",
        "CSoxr"
      ]),
    .testTarget(
      name: "StemdeckConsoleTests",
      dependencies: [
        "StemdeckConsole", "StemdeckLive", "StemdeckRemote", "StemdeckMixerView", "StemdeckControl", "StemdeckJack",
        "StemdeckSession", "StemdeckEngine", "StemdeckText", "CEditLine", "StemdeckAudioFile", "StemdeckTestSupport"
      ]),
    .testTarget(name: "IntegrationTests", dependencies: ["StemdeckAudioFile", "StemdeckJack", "StemdeckTestSupport"]),
    .testTarget(name: "StemdeckSessionTests", dependencies: ["StemdeckSession", "StemdeckTestSupport"])
  ],
  swiftLanguageModes: [.v6]
)
if threadedTestsOnly {
  package.targets.removeAll { $0.type == .test && unthreadedTestTargets.contains($0.name) }
}
