import Foundation
import StemdeckTestSupport
import Testing

// Crash containment: an LV2 plugin that crashes when instantiated, or in its first run, is
// refused with an error naming it and the signal, and the console plays on. The plugins are a
// test fixture: a tiny LV2 bundle compiled here with cc into a temporary LV2_PATH (its
// `instantiate` raises SIGSEGV; the other's `run` aborts). stemdeck tries each new plugin in a
// child process first (PluginProbe.swift, the hidden `__lv2-probe` subcommand). A third plugin
// crashes when it finds itself in that child holding one of the console's sockets (JACK's, the
// control socket): the child gets no descriptor of the console's but stdin, stdout and stderr.
extension JackIntegrationTests {
  static let crashSource = """
    #include <lv2/core/lv2.h>
    #include <signal.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <sys/stat.h>

    typedef struct { const float *in; float *out; } Pass;

    static LV2_Handle crashing(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *f) {
      raise(SIGSEGV);
      return NULL;
    }
    static LV2_Handle passing(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *f) {
      return calloc(1, sizeof(Pass));
    }
    /* In the probe child only (its argv names the subcommand): a socket among its descriptors
       was inherited from the console. */
    static LV2_Handle socketless(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *f) {
      char cmdline[4096] = {0};
      FILE *c = fopen("/proc/self/cmdline", "r");
      size_t n = c ? fread(cmdline, 1, sizeof cmdline - 1, c) : 0;
      if (c) fclose(c);
      int probe = 0;
      for (size_t i = 0; i < n; i += strlen(cmdline + i) + 1) probe |= strcmp(cmdline + i, "__lv2-probe") == 0;
      struct stat st;
      for (int fd = 3; probe && fd < 4096; fd++)
        if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) raise(SIGSEGV);
      return calloc(1, sizeof(Pass));
    }
    static void connect(LV2_Handle h, uint32_t port, void *data) {
      Pass *p = h;
      if (port == 0) p->in = data; else p->out = data;
    }
    static void copy(LV2_Handle h, uint32_t n) {
      Pass *p = h;
      for (uint32_t i = 0; i < n; i++) p->out[i] = p->in[i];
    }
    static void aborting(LV2_Handle h, uint32_t n) { abort(); }
    static void cleanup(LV2_Handle h) { free(h); }

    static const LV2_Descriptor descriptors[] = {
      {"urn:stemdeck:test:crash-instantiate", crashing, connect, NULL, copy, NULL, cleanup, NULL},
      {"urn:stemdeck:test:crash-run", passing, connect, NULL, aborting, NULL, cleanup, NULL},
      {"urn:stemdeck:test:socketless", socketless, connect, NULL, copy, NULL, cleanup, NULL},
    };

    LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) {
      return index < 3 ? &descriptors[index] : NULL;
    }
    """

  static func crashManifest() -> String {
    let plugins = [("crash-instantiate", "Crash in instantiate"), ("crash-run", "Crash in run"), ("socketless", "No sockets")].map {
      uri, name in
      """
      <urn:stemdeck:test:\(uri)> a lv2:Plugin, lv2:AmplifierPlugin ;
        lv2:binary <crash.so> ;
        doap:name "\(name)" ;
        lv2:optionalFeature lv2:hardRTCapable ;
        lv2:port [ a lv2:AudioPort, lv2:InputPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In" ] ,
          [ a lv2:AudioPort, lv2:OutputPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out" ] .
      """
    }
    return "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n@prefix doap: <http://usefulinc.com/ns/doap#> .\n\n"
      + plugins.joined(separator: "\n\n") + "\n"
  }

  @Test("live: a plugin that crashes in instantiate or in its first run is an error naming it and the signal; the console plays on")
  func crashingPluginsContained() async throws {
    let dir = try IntegrationTempDir()
    let bundle = dir.file("lv2/crash.lv2")
    try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
    try Self.crashSource.write(toFile: dir.file("crash.c"), atomically: true, encoding: .utf8)
    try Self.crashManifest().write(toFile: bundle + "/manifest.ttl", atomically: true, encoding: .utf8)
    let cc = try await runTool("cc", ["-shared", "-fPIC", "-O1", "-o", bundle + "/crash.so", dir.file("crash.c")], timeout: 60)
    try #require(cc.status == 0, "cc: \(cc.stderr)")
    let server = try await PrivateJackServer()
    defer { server.stop() }
    try writeSine(dir.file("tone.wav"), sampleRate: 48000, seconds: 1, frequencies: [1000], amplitude: 0.25)
    let p = try StemdeckProcess(
      server: server, extra: ["--keep-going"], launcher: ["/usr/bin/env", "LV2_PATH=\(dir.file("lv2")):/usr/lib/lv2"])
    defer { p.kill() }
    try await p.run("add \(dir.file("tone.wav")) as tone")
    try await p.run("loops tone -1")
    try await p.run("play")
    let listed = try await p.run("plugins crash")
    #expect(listed.contains { $0.contains("Crash in instantiate") } && listed.contains { $0.contains("Crash in run") }, "\(listed)")
    for _ in 0..<2 {  // a crash is not remembered as good: tried again, refused again
      let refused = try await p.attempt("insert add tone urn:stemdeck:test:crash-instantiate", timeout: 40)
      #expect(
        refused.contains { $0.hasPrefix("error: ") && $0.contains("'Crash in instantiate'") && $0.contains("SIGSEGV") },
        "\(refused)\n\(p.transcript)")
    }
    let aborted = try await p.attempt("insert add master urn:stemdeck:test:crash-run", timeout: 40)
    #expect(
      aborted.contains { $0.hasPrefix("error: ") && $0.contains("'Crash in run'") && $0.contains("SIGABRT") }, "\(aborted)\n\(p.transcript)"
    )
    // Still here, still playing, and a plugin that works goes in. The probe child of the next one
    // holds none of the console's sockets (the plugin would crash there if it did).
    try await p.run("insert add tone http://plugin.org.uk/swh-plugins/amp force", timeout: 40)
    try await p.run("insert add tone urn:stemdeck:test:socketless", timeout: 40)
    let list = try await p.run("insert list tone") + p.run("insert list master") + p.run("status")
    #expect(list.contains { $0.contains("Simple amplifier") } && list.contains { $0.contains("No sockets") }, "\(list)")
    #expect(list.contains("master: no inserts"), "\(list)")
    #expect(list.contains { $0.contains("playing") }, "\(list)")
    #expect(!FileManager.default.fileExists(atPath: "core"), "a child left a core file")
    // The probe child loads only the bundle it is given: with LV2_PATH on an empty folder, the
    // test plugin is found from its bundle alone, and is not found without it.
    let binary = try StemdeckBinary.require()
    let probe = ["__lv2-probe", "urn:stemdeck:test:socketless", "48000", "256"]
    let nowhere = ["LV2_PATH": dir.file("no-plugins-here")]
    let fromBundle = try await runTool(binary, probe + [bundle], environment: nowhere, timeout: 30)
    let fromPath = try await runTool(binary, probe, environment: nowhere, timeout: 30)
    #expect(fromBundle.status == 0 && fromPath.status == 3, "bundle: \(fromBundle.status), LV2_PATH: \(fromPath.status)")
    // 1: the three refused adds failed (--keep-going goes on but keeps the status).
    #expect(try await p.finish(timeout: 20) == 1, "\(p.transcript)")
  }
}
