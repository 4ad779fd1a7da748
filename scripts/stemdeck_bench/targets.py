"""Every target the issues set for the benchmark, with its threshold, in one place. The report's
sections judge their figures with `met` (or `target(key).limit` where the figure is a ratio of
two measurements) and print `text` in the summary table; docs/benchmarking.md explains them."""

import operator
from typing import NamedTuple


class Target(NamedTuple):
    key: str      # "CASE.name"
    case: str     # the case that measures it
    text: str     # the summary table's wording
    op: str       # how the figure compares with the limit: "<", "<=", ">="
    limit: float
    figure: str   # what is compared


TARGETS = [
    Target("1.ecasound", "1", "stemdeck CPU ≤ 1/3 of ecasound's", ">=", 3, "ecasound's CPU / stemdeck's"),
    Target("1.sox", "1", "stemdeck CPU ≤ 1/3 of sox's", ">=", 3, "sox's CPU / stemdeck's"),
    Target("1.mix", "1", "render = reference mix (< −90 dBFS)", "<", -90, "max |render − reference mix|, dBFS"),
    Target("1b.sox", "1b", "44.1 kHz stems at 48 kHz: stemdeck CPU ≤ ½ of sox's (mix + `rate`)", ">=", 2,
           "sox's CPU / stemdeck's"),
    Target("1b.band", "1b", "44.1 kHz stems at 48 kHz = sox's very-high-quality mix below 15 kHz (RMS < −90 dBFS)", "<",
           -90, "RMS difference below 15 kHz, dBFS"),
    Target("1i.ecasound", "1i", "32 stems × an LV2 EQ and compressor offline: stemdeck CPU ≤ ½ of ecasound's (-elv2)",
           ">=", 2, "ecasound's CPU / stemdeck's"),
    Target("1i.host", "1i", "the same, beyond the plugins' own `run()` (the plugins alone in a lilv harness): stemdeck's "
           "hosting CPU ≤ ½ of ecasound's", ">=", 2, "ecasound's (CPU − plugins alone) / stemdeck's"),
    Target("1r.soxr", "1r", "44.1 → 48 kHz: stemdeck's `fast` costs less than soxr high", ">=", 1,
           "soxr high's ns per sample / stemdeck's"),
    Target("1r.clean", "1r", "stemdeck's `fast`: residual at least 99 dB under every tone it keeps", ">=", 99,
           "worst residual under the tone, dB"),
    Target("1s.cpu", "1s", "--stems CPU < 1.5× a plain render", "<", 1.5, "CPU of --stems / plain"),
    Target("1s.sum", "1s", "stem files sum to the master (< −100 dBFS)", "<", -100, "max |sum of stems − master|, dBFS"),
    Target("2.band", "2", "fast render = sox's varispeed of the reference mix below 15 kHz (RMS < −90 dBFS)", "<", -90,
           "RMS difference below 15 kHz, dBFS"),
    Target("2.fast", "2", "fast sinc ≥ 2.5× ecasound's throughput", ">=", 2.5, "throughput / ecasound -ei's"),
    Target("2.linear", "2", "linear ≥ 20× ecasound's throughput", ">=", 20, "throughput / ecasound -ei's"),
    Target("2s.cpu", "2s", "offline CPU per stretch stem < 1 % of a core (rate 0.9)", "<", 1,
           "render CPU / stems / output seconds, %"),
    Target("3.load", "3", "DSP load ≤ 50 % (every judged live row, with xruns ≤ baseline)", "<=", 50, "jack_cpu_load %"),
    Target("3.plain", "3", "plain", ">=", 256, "plain stems within 3.load"),
    Target("3.varispeed", "3", "varispeed (fast)", ">=", 64, "varispeed 0.9 fast stems within 3.load"),
    Target("3.44k", "3", "44.1 kHz stems (fast)", ">=", 256, "44.1 kHz stems within 3.load"),
    Target("3.44kcost", "3", "a live 44.1 kHz stem ≤ 1.5× a native-rate stem's DSP load (256 of each, net of the "
           "baseline)", "<=", 1.5, "net load of 256 44.1 kHz stems / of 256 plain"),
    Target("3.ecasound", "3", "32 stems: DSP load ≤ ½ ecasound's (net of the server + observer baseline)", "<=", 0.5,
           "stemdeck's net load / ecasound's"),
    Target("3s.tempo08", "3s", "stretch at tempo 0.8", ">=", 32, "stretch stems at tempo 0.8 within 3.load"),
    Target("3s.tempo115", "3s", "stretch at tempo 1.15", ">=", 24, "stretch stems at tempo 1.15 within 3.load"),
    Target("3g.load", "3g", "64 stems with HPF + 3-band EQ, 8 buses, 2 sends live at 128 frames: DSP load < 25 %, "
           "xruns ≤ the load-matched control", "<", 25, "jack_cpu_load %, median of the paired windows"),
    Target("3g.bypass", "3g", "a stem with EQ bypassed costs nothing extra (live load, bypassed − no EQ)", "<=", 0.5,
           "median DSP load of the EQ-bypassed graph − the graph without EQ, % points"),
    Target("3i.overhead", "3i", "64 stems × 2 LV2 inserts live at 128 frames: stemdeck's own overhead beyond the "
           "plugins' `run()` < 10 %", "<", 10, "(process thread CPU with − without − plugins alone) / plugins alone, %"),
    Target("4.memory", "4", "resident memory < 64 MB (61.0 MiB), 32 × 10-minute stems", "<", 64, "private MB"),
    Target("5.open", "5", "64-stem session plays within 250 ms of `open`", "<=", 0.25, "open → playing, s"),
    Target("5.port", "5", "a `vol` change reaches the port in the next period", "<=", 1, "latest period"),
    Target("5c.port", "5c", "a `vol` over the control socket reaches the port in the next period", "<=", 1, "latest period"),
    Target("5w.port", "5w", "a `vol` over the web mixer's WebSocket reaches the port in the next period", "<=", 1,
           "latest period"),
    Target("5m.cpu", "5m", "8 web mixer pages (meters at 30/s, 64 stems) cost stemdeck < 2 % of a core", "<", 2,
           "% points of one core over no page"),
    Target("5p.fps", "5p", "the page renders 64 strips at 60 frames a second (headless Chromium)", ">=", 57,
           "requestAnimationFrame callbacks a second over 5 s"),
]

_BY_KEY = {t.key: t for t in TARGETS}
_OPS = {"<": operator.lt, "<=": operator.le, ">=": operator.ge}


def target(key):
    return _BY_KEY[key]


def met(key, value):
    """True when `value` meets the target `key` (False for a missing figure)."""
    t = _BY_KEY[key]
    return value is not None and _OPS[t.op](value, t.limit)
