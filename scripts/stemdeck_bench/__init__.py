"""stemdeck's benchmark (`scripts/bench`, the entry point), by subject:

- cli.py            options, tools, build, material, running the cases, the results JSON
- common.py         constants, the run's state, processes, timing, number formatting
- material.py       the generated stems (sox), sessions, and sox's measurements of outputs
- jack.py           a private jackd, stemdeck in script mode, live measuring windows
- engine.py         cases 1, 1b, 2, 2f, 2s: offline engine CPU against ecasound and sox
- inserts.py        case 1i: 32 stems through LV2 inserts offline, against ecasound hosting the same plugins
- export.py         case 1s: stem export (`render --stems`)
- live.py           cases 3, 3s: live DSP load and xruns, with load-matched controls
- graph.py          case 3g: the mixer graph live (64 EQ'd stems, 8 buses, 2 sends), EQ bypassed vs none
- live_inserts.py   case 3i: 64 stems × 2 LV2 inserts live against none, and the plugins alone (lv2_run_cost.cpp):
                    stemdeck's own overhead of hosting them
- memory.py         case 4: resident memory
- latency.py        case 5: open-to-play and `vol`-to-port latency
- control_socket.py case 5c: the control socket to the port, and its round trip
- web.py            cases 5w, 5m, 5p: the web mixer's WebSocket to the port; what 8 pages cost (64 stems); the page's frame rate
- targets.py        every target with its threshold, in one place
- report.py         the markdown, rendered from the results JSON (`--report FILE.json` again)

Python 3.11 standard library only. Method and caveats: docs/benchmarking.md.
"""
