// Case 3i of scripts/bench (issue 39): what a set of LV2 plugins costs by itself, with no host
// around it but lilv and this loop. The figure the live case subtracts from stemdeck's added DSP
// load to leave stemdeck's own overhead of hosting them.
//
//   lv2_run_cost [--rate HZ] [--frames F] [--stems N] [--seconds S] [--max-block M] [--cpu C]
//                [--paced [--fifo PRIO]] --plugin URI [SYMBOL=VALUE…] [--plugin URI [SYMBOL=VALUE…]]… -- FILE.wav…
//
// Instantiates, through lilv, each plugin once per stem (a stereo plugin) or twice (a mono one:
// left and right, as stemdeck links two on a stereo strip) at HZ, with the features and options
// stemdeck gives its inserts (URID map and unmap, options: sample rate and min/max block length
// 1/M, bounded block length); sets the control inputs by symbol (the rest at their defaults);
// connects stem k's chain, in order, to its own buffers (plugin j's outputs are plugin j+1's
// inputs); activates; then feeds every stem F frames of FILE k mod count (16-bit stereo WAV, as
// the bench's stems; looped) a block and runs the chains, stem after stem, for S seconds of audio
// after a second's warm-up. The WAV decoding happens between blocks; only the `run()` calls of a
// block are timed, with the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID: time this thread was on
// a CPU, so a shared machine's other processes preempting it do not count; under realtime JACK
// the process thread is SCHED_FIFO and is not preempted either) and, beside it, the wall clock
// per block (what JACK's DSP load is made of). The thread is pinned to CPU C (default the last).
//
// Without --paced the blocks run back to back: the plugins' code and state stay hot in the caches
// and branch predictors. With --paced each block waits for the next period boundary (F / HZ
// apart, absolute CLOCK_MONOTONIC), as a live host's process thread waits for its cycle, so the
// CPU does other work or idles in between and every period starts colder: the plugins' cost as
// any live host would see it (a few per cent more here). --fifo PRIO runs the paced thread
// SCHED_FIFO at PRIO, as JACK's process threads run; the wall clock is then not preempted either.
//
// Prints one line of "key value" pairs: blocks, instances, cpu_ns_per_block (the figure: mean
// thread CPU per block, the clocks' own cost taken off), wall_ns_median, wall_ns_mean,
// wall_ns_max32_median (the median over 32-block runs of each run's slowest block: JACK's load is
// built from such maxima), clock_ns and wall_clock_ns (the clocks' own cost in each figure per
// block, taken off), peak (largest
// |output| of the last plugins: the chain ran). Exit 1 on bad input, 2 when a plugin cannot run.
#include <lilv/lilv.h>
#include <lv2/atom/atom.h>
#include <lv2/buf-size/buf-size.h>
#include <lv2/core/lv2.h>
#include <lv2/options/options.h>
#include <lv2/parameters/parameters.h>
#include <lv2/urid/urid.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

const char *kTool = "lv2_run_cost";

[[noreturn]] void fail(int status, const std::string &message) {
  std::fprintf(stderr, "%s: %s\n", kTool, message.c_str());
  std::exit(status);
}

double clock_ns(clockid_t id) {
  timespec t;
  clock_gettime(id, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

// ---- URIDs: the map and unmap features (not on the timed path).
struct Urids {
  std::map<std::string, LV2_URID> ids;
  std::vector<std::string> names;
  LV2_URID get(const char *uri) {
    auto it = ids.find(uri);
    if (it != ids.end()) return it->second;
    names.push_back(uri);
    return ids[uri] = LV2_URID(names.size());
  }
};

LV2_URID map_uri(LV2_URID_Map_Handle h, const char *uri) { return static_cast<Urids *>(h)->get(uri); }

const char *unmap_urid(LV2_URID_Unmap_Handle h, LV2_URID id) {
  auto *u = static_cast<Urids *>(h);
  return id >= 1 && id <= u->names.size() ? u->names[id - 1].c_str() : nullptr;
}

// ---- Audio: a 16-bit stereo PCM WAV file, mapped; decoded a block at a time.
struct Wav {
  const int16_t *frames = nullptr;  // interleaved L R
  long count = 0;
};

Wav open_wav(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) fail(1, "cannot open " + path);
  auto *base = static_cast<const uint8_t *>(mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0));
  close(fd);
  if (base == MAP_FAILED || st.st_size < 12 || std::memcmp(base, "RIFF", 4) || std::memcmp(base + 8, "WAVE", 4))
    fail(1, path + ": not a RIFF WAVE file");
  auto u16 = [&](size_t at) { return unsigned(base[at]) | unsigned(base[at + 1]) << 8; };
  auto u32 = [&](size_t at) { return u16(at) | u16(at + 2) << 16; };
  size_t at = 12;
  bool format_ok = false;
  while (at + 8 <= size_t(st.st_size)) {
    size_t size = u32(at + 4);
    if (!std::memcmp(base + at, "fmt ", 4)) {
      // PCM (1) or extensible (0xFFFE), 2 channels, 16 bits.
      format_ok = (u16(at + 8) == 1 || u16(at + 8) == 0xFFFE) && u16(at + 10) == 2 && u16(at + 22) == 16;
    } else if (!std::memcmp(base + at, "data", 4)) {
      if (!format_ok) fail(1, path + ": not 16-bit stereo PCM (what the bench's stems are)");
      size = std::min(size, size_t(st.st_size) - at - 8);
      Wav w;
      w.frames = reinterpret_cast<const int16_t *>(base + at + 8);
      w.count = long(size / 4);
      if (w.count == 0) fail(1, path + ": no audio");
      return w;
    }
    at += 8 + size + (size & 1);
  }
  fail(1, path + ": no data chunk");
}

// ---- Plugins.
struct Spec {
  std::string uri;
  std::vector<std::pair<std::string, float>> values;
};

struct Stage {  // one plugin of one stem's chain: one instance (stereo) or two (mono: L, R)
  std::vector<LilvInstance *> instances;
  std::vector<std::vector<float>> controls;  // each instance's port values (control ports)
  float *in[2];
  float *out[2];
};

struct Features {
  Urids urids;
  LV2_URID_Map map{&urids, map_uri};
  LV2_URID_Unmap unmap{&urids, unmap_urid};
  float rate = 0;
  int32_t min_block = 1, max_block = 4096;
  LV2_Options_Option options[4];
  LV2_Feature f_map{LV2_URID__map, &map}, f_unmap{LV2_URID__unmap, &unmap}, f_options{LV2_OPTIONS__options, options},
      f_bounded{LV2_BUF_SIZE__boundedBlockLength, nullptr};
  const LV2_Feature *list[5] = {&f_map, &f_unmap, &f_options, &f_bounded, nullptr};

  Features(double sample_rate, int max_block_frames) : rate(float(sample_rate)), max_block(max_block_frames) {
    LV2_URID f = urids.get(LV2_ATOM__Float), i = urids.get(LV2_ATOM__Int);
    options[0] = {LV2_OPTIONS_INSTANCE, 0, urids.get(LV2_PARAMETERS__sampleRate), sizeof(float), f, &rate};
    options[1] = {LV2_OPTIONS_INSTANCE, 0, urids.get(LV2_BUF_SIZE__minBlockLength), sizeof(int32_t), i, &min_block};
    options[2] = {LV2_OPTIONS_INSTANCE, 0, urids.get(LV2_BUF_SIZE__maxBlockLength), sizeof(int32_t), i, &max_block};
    options[3] = {LV2_OPTIONS_INSTANCE, 0, 0, 0, 0, nullptr};
  }
  bool has(const char *uri) const {
    for (int k = 0; list[k]; k++)
      if (!std::strcmp(list[k]->URI, uri)) return true;
    return false;
  }
};

struct Plugin {  // what every stem's instances of one plugin share
  const LilvPlugin *plugin;
  std::string name;
  uint32_t ports;
  bool mono;
  std::vector<float> initial;  // each port's starting value (controls: given or default)
  std::vector<int> kind;       // 0 audio in, 1 audio out, 2 control, 3 optional other
};

Plugin describe(LilvWorld *world, const Spec &s, const Features &features) {
  LilvNode *uri = lilv_new_uri(world, s.uri.c_str());
  const LilvPlugin *p = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), uri);
  lilv_node_free(uri);
  if (!p) fail(2, "no LV2 plugin <" + s.uri + "> is installed");
  Plugin d{p, s.uri, lilv_plugin_get_num_ports(p), false, {}, {}};
  LilvNodes *required = lilv_plugin_get_required_features(p);
  LILV_FOREACH(nodes, it, required) {
    const char *f = lilv_node_as_uri(lilv_nodes_get(required, it));
    if (!features.has(f)) fail(2, "<" + s.uri + "> requires the feature <" + f + ">, which this harness lacks");
  }
  lilv_nodes_free(required);
  LilvNode *audio = lilv_new_uri(world, LV2_CORE__AudioPort), *control = lilv_new_uri(world, LV2_CORE__ControlPort),
           *input = lilv_new_uri(world, LV2_CORE__InputPort),
           *optional = lilv_new_uri(world, LV2_CORE__connectionOptional);
  std::vector<float> defaults(d.ports, NAN), mins(d.ports, NAN), maxs(d.ports, NAN);
  lilv_plugin_get_port_ranges_float(p, mins.data(), maxs.data(), defaults.data());
  int ins = 0, outs = 0;
  for (uint32_t k = 0; k < d.ports; k++) {
    const LilvPort *port = lilv_plugin_get_port_by_index(p, k);
    bool is_in = lilv_port_is_a(p, port, input);
    if (lilv_port_is_a(p, port, audio)) {
      d.kind.push_back(is_in ? 0 : 1);
      (is_in ? ins : outs)++;
    } else if (lilv_port_is_a(p, port, control)) {
      d.kind.push_back(2);
    } else if (lilv_port_has_property(p, port, optional)) {
      d.kind.push_back(3);
    } else {
      fail(2, "<" + s.uri + ">: port " + std::to_string(k) + " is neither audio nor control and not optional");
    }
    d.initial.push_back(std::isnan(defaults[k]) ? 0.0f : defaults[k]);
  }
  lilv_node_free(audio);
  lilv_node_free(control);
  lilv_node_free(input);
  lilv_node_free(optional);
  if (!((ins == 1 && outs == 1) || (ins == 2 && outs == 2)))
    fail(2, "<" + s.uri + "> has " + std::to_string(ins) + " audio inputs and " + std::to_string(outs) +
                " outputs: neither mono nor stereo");
  d.mono = ins == 1;
  for (auto &[symbol, value] : s.values) {
    LilvNode *sym = lilv_new_string(world, symbol.c_str());
    const LilvPort *port = lilv_plugin_get_port_by_symbol(p, sym);
    lilv_node_free(sym);
    if (!port) fail(1, "<" + s.uri + "> has no port '" + symbol + "'");
    uint32_t k = lilv_port_get_index(p, port);
    if (d.kind[k] != 2) fail(1, "<" + s.uri + ">: '" + symbol + "' is not a control port");
    float v = value;
    if (!std::isnan(mins[k])) v = std::max(v, mins[k]);
    if (!std::isnan(maxs[k])) v = std::min(v, maxs[k]);
    d.initial[k] = v;  // clamped to the port's range, as stemdeck does
  }
  return d;
}

Stage instantiate(const Plugin &d, double rate, Features &features, float *in[2], float *out[2]) {
  Stage st{};
  for (int c = 0; c < 2; c++) st.in[c] = in[c], st.out[c] = out[c];
  for (int k = 0; k < (d.mono ? 2 : 1); k++) {
    LilvInstance *i = lilv_plugin_instantiate(d.plugin, rate, features.list);
    if (!i) fail(2, "<" + d.name + "> failed to instantiate");
    st.instances.push_back(i);
    st.controls.push_back(d.initial);
  }
  for (size_t k = 0; k < st.instances.size(); k++) {
    int ain = 0, aout = 0;
    for (uint32_t p = 0; p < d.ports; p++) {
      void *target = nullptr;
      switch (d.kind[p]) {
        case 0: target = in[d.mono ? k : ain++]; break;
        case 1: target = out[d.mono ? k : aout++]; break;
        case 2: target = &st.controls[k][p]; break;
        default: break;
      }
      lilv_instance_connect_port(st.instances[k], p, target);
    }
    lilv_instance_activate(st.instances[k]);
  }
  return st;
}

float *buffer(int frames) {
  auto *b = static_cast<float *>(std::aligned_alloc(64, size_t(frames + 15) / 16 * 64));
  std::memset(b, 0, size_t(frames + 15) / 16 * 64);
  return b;
}

using Calls = std::vector<std::pair<void (*)(LV2_Handle, uint32_t), LV2_Handle>>;

struct Figures {
  size_t blocks;
  double cpu_per_block, wall_median, wall_mean, wall_max32_median, cpu_clock, wall_clock, peak;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Feeds every stem a block of its file (looped), runs `calls` on it, `warm` blocks untimed and
// then `timed` blocks timed, each after the next multiple of `period` ns (0: back to back);
// fails when an output is not finite.
Figures measure(const Calls &calls, const std::vector<Wav> &audio, const std::vector<float *> &inputs,
                const std::vector<float *> &last, int stems, int frames, long period, long warm, long timed) {
  Figures f{};
  // The clocks' own cost per block: the same four readings around nothing (medians), taken off
  // each block's two figures.
  std::vector<double> empty_cpu, empty_wall;
  for (int k = 0; k < 2001; k++) {
    double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    double c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    empty_cpu.push_back(c1 - c0);
    empty_wall.push_back(w1 - w0);
  }
  f.cpu_clock = median(empty_cpu);
  f.wall_clock = median(empty_wall);
  std::vector<long> position(static_cast<size_t>(stems), 0);
  std::vector<double> wall;
  wall.reserve(size_t(timed));
  double cpu_total = 0;
  bool finite = true;
  timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (long b = 0; b < warm + timed; b++) {
    if (period) {
      next.tv_nsec += period;
      while (next.tv_nsec >= 1000000000) next.tv_nsec -= 1000000000, next.tv_sec++;
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) == EINTR) {
      }
    }
    for (int k = 0; k < stems; k++) {
      const Wav &w = audio[size_t(k) % audio.size()];
      float *l = inputs[2 * k], *r = inputs[2 * k + 1];
      long at = position[size_t(k)];
      for (int i = 0; i < frames; i++, at = at + 1 == w.count ? 0 : at + 1) {
        l[i] = w.frames[2 * at] * (1.0f / 32768);
        r[i] = w.frames[2 * at + 1] * (1.0f / 32768);
      }
      position[size_t(k)] = at;
    }
    double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (auto &[run, handle] : calls) run(handle, uint32_t(frames));
    double c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    if (b < warm) continue;
    cpu_total += c1 - c0 - f.cpu_clock;
    wall.push_back(w1 - w0 - f.wall_clock);
    for (int k = 0; k < 2 * stems; k++)
      for (int i = 0; i < frames; i++) {
        float v = std::fabs(last[size_t(k)][i]);
        finite = finite && std::isfinite(v);
        f.peak = std::max(f.peak, double(v));
      }
  }
  if (!finite) fail(2, "a plugin put out NaN or infinity");
  std::vector<double> max32;
  for (size_t k = 0; k + 32 <= wall.size(); k += 32)
    max32.push_back(*std::max_element(wall.begin() + long(k), wall.begin() + long(k) + 32));
  f.blocks = wall.size();
  f.cpu_per_block = cpu_total / double(std::max<size_t>(1, wall.size()));
  f.wall_median = median(wall);
  f.wall_max32_median = median(max32);
  for (double v : wall) f.wall_mean += v;
  f.wall_mean /= double(std::max<size_t>(1, wall.size()));
  return f;
}

}  // namespace

int main(int argc, char **argv) {
  double rate = 48000, seconds = 30;
  int frames = 128, stems = 64, max_block = 4096, cpu = -1, fifo = 0;
  bool paced = false;
  std::vector<Spec> specs;
  std::vector<std::string> files;
  for (int a = 1; a < argc; a++) {
    std::string s = argv[a];
    auto next = [&]() -> std::string {
      if (a + 1 >= argc) fail(1, s + " needs a value");
      return argv[++a];
    };
    if (s == "--rate") rate = std::atof(next().c_str());
    else if (s == "--frames") frames = std::atoi(next().c_str());
    else if (s == "--stems") stems = std::atoi(next().c_str());
    else if (s == "--seconds") seconds = std::atof(next().c_str());
    else if (s == "--max-block") max_block = std::atoi(next().c_str());
    else if (s == "--cpu") cpu = std::atoi(next().c_str());
    else if (s == "--paced") paced = true;
    else if (s == "--fifo") fifo = std::atoi(next().c_str());
    else if (s == "--plugin") specs.push_back({next(), {}});
    else if (s == "--") files.assign(argv + a + 1, argv + argc), a = argc;
    else if (!specs.empty() && s.find('=') != std::string::npos)
      specs.back().values.push_back({s.substr(0, s.find('=')), float(std::atof(s.c_str() + s.find('=') + 1))});
    else fail(1, "unexpected argument '" + s + "' (see the comment at the top of lv2_run_cost.cpp)");
  }
  if (specs.empty() || files.empty() || rate <= 0 || frames < 1 || frames > max_block || stems < 1 || seconds <= 0 ||
      fifo < 0 || (fifo && !paced))
    fail(1, "usage: lv2_run_cost [--rate HZ] [--frames F] [--stems N] [--seconds S] [--max-block M] [--cpu C] "
            "[--paced [--fifo PRIO]] --plugin URI [SYMBOL=VALUE…]… -- FILE.wav…");

  // Pin this (the only) thread: the per-block wall clock then never includes a migration.
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpu < 0) cpu = int(ncpu - 1);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) fail(1, "cannot pin to CPU " + std::to_string(cpu));
  sched_param prio{};
  prio.sched_priority = fifo;
  if (fifo && sched_setscheduler(0, SCHED_FIFO, &prio) != 0)
    fail(1, "cannot run SCHED_FIFO at priority " + std::to_string(fifo) + ": " + std::strerror(errno));

  std::vector<Wav> audio;
  for (auto &f : files) audio.push_back(open_wav(f));

  LilvWorld *world = lilv_world_new();
  lilv_world_load_all(world);
  Features features(rate, max_block);
  std::vector<Plugin> plugins;
  for (auto &s : specs) plugins.push_back(describe(world, s, features));

  // Per stem: its input planes, then each plugin's output planes (the next plugin's inputs).
  std::vector<std::vector<Stage>> chains(static_cast<size_t>(stems));
  std::vector<float *> inputs(static_cast<size_t>(stems) * 2);
  std::vector<float *> last(static_cast<size_t>(stems) * 2);
  size_t instances = 0;
  for (int k = 0; k < stems; k++) {
    float *in[2] = {buffer(max_block), buffer(max_block)};
    inputs[2 * k] = in[0], inputs[2 * k + 1] = in[1];
    for (auto &d : plugins) {
      float *out[2] = {buffer(max_block), buffer(max_block)};
      chains[k].push_back(instantiate(d, rate, features, in, out));
      instances += chains[k].back().instances.size();
      in[0] = out[0], in[1] = out[1];
    }
    last[2 * k] = in[0], last[2 * k + 1] = in[1];
  }
  // The runs, flattened in stemdeck's order: stem by stem, each chain in order, L before R.
  Calls calls;
  for (auto &chain : chains)
    for (auto &st : chain)
      for (auto *i : st.instances) calls.push_back({lilv_instance_get_descriptor(i)->run, lilv_instance_get_handle(i)});

  long period = paced ? long(frames * 1e9 / rate) : 0;
  Figures f = measure(calls, audio, inputs, last, stems, frames, period, long(rate / frames), long(seconds * rate / frames));
  std::printf("blocks %zu instances %zu cpu_ns_per_block %.1f wall_ns_median %.1f wall_ns_mean %.1f "
              "wall_ns_max32_median %.1f clock_ns %.1f wall_clock_ns %.1f peak %.6f cpu %d paced %d fifo %d\n",
              f.blocks, instances, f.cpu_per_block, f.wall_median, f.wall_mean, f.wall_max32_median, f.cpu_clock,
              f.wall_clock, f.peak, cpu, paced ? 1 : 0, fifo);
  for (auto &chain : chains)
    for (auto &st : chain)
      for (auto *i : st.instances) {
        lilv_instance_deactivate(i);
        lilv_instance_free(i);
      }
  lilv_world_free(world);
  return 0;
}
