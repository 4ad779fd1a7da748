// The web mixer's page is kept in web/ and embedded in the binary by scripts/embed-web (no build
// step): the embedded copy must be the files, byte for byte, and nothing but them is served.
import Foundation
@testable import StemdeckConsole
import Testing
@testable import StemdeckMixerView
@testable import StemdeckRemote
@testable import StemdeckLive

@Suite("the web mixer's embedded page")
struct WebAssetsTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  @Test("every file of web/ is embedded as it is (run scripts/embed-web after changing one)")
  func embeddedCopyEqualsTheFiles() throws {
    let files = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("web").path).sorted()
    #expect(files == WebAssets.sources.map(\.file).sorted())
    for (file, text) in WebAssets.sources {
      let onDisk = try Data(contentsOf: Self.root.appendingPathComponent("web/" + file))
      #expect(Array(onDisk) == Array(text.utf8), "web/\(file) differs from its embedded copy: run scripts/embed-web")
    }
    #expect(WebAssets.all.map(\.path).sorted() == files.map { "/" + $0 }.sorted())
  }

  @Test("the token: loopback addresses, Host headers, comparison")
  func tokenRules() {
    #expect(WebToken.isLoopback("127.0.0.1") && WebToken.isLoopback("127.1.2.3") && WebToken.isLoopback("::1"))
    #expect(WebToken.isLoopback("localhost"))
    #expect(!WebToken.isLoopback("0.0.0.0") && !WebToken.isLoopback("192.168.1.5") && !WebToken.isLoopback("::"))
    #expect(WebToken.isLoopbackHost("127.0.0.1:8080", bound: "127.0.0.1"))
    #expect(WebToken.isLoopbackHost("[::1]:8080", bound: "127.0.0.1"))
    #expect(WebToken.isLoopbackHost("localhost:8080", bound: "127.0.0.1"))
    #expect(!WebToken.isLoopbackHost("evil.example:8080", bound: "127.0.0.1"))
    #expect(WebToken.matches("abc", "abc") && !WebToken.matches("abd", "abc") && !WebToken.matches("ab", "abc"))
    #expect(!WebToken.matches("abcd", "abc") && !WebToken.matches("", "abc"))
  }

  @Test("a token file is made 0600 once, then read; one others may read is refused")
  func tokenFile() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webtoken-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("stemdeck/web-token").path
    let first = try WebToken.loadOrCreate(at: path)
    #expect(first.count == 32)
    #expect(try WebToken.loadOrCreate(at: path) == first)
    var st = stat()
    #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
    chmod(path, 0o644)
    #expect(throws: ControlError.self) { try WebToken.loadOrCreate(at: path) }
  }
}
