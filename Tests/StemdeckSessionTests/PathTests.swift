import Foundation
import Testing
@testable import StemdeckSession

@Suite("Audio file paths")
struct PathTests {
  @Test("relative files resolve against the session file's folder")
  func resolveRelative() {
    #expect(
      SessionFile.resolve(file: "../Samples/drums.flac", sessionPath: "/work/main/Sessions/demo.json")
        == "/work/main/Samples/drums.flac")
    #expect(SessionFile.resolve(file: "drums.flac", sessionPath: "/a/b/s.json") == "/a/b/drums.flac")
    #expect(SessionFile.resolve(file: "./x/./y/../drums.flac", sessionPath: "/a//b/./s.json") == "/a/b/x/drums.flac")
    #expect(SessionFile.resolve(file: "../../../../x.wav", sessionPath: "/a/s.json") == "/x.wav")
    #expect(SessionFile.resolve(file: "x.wav", sessionPath: "/s.json") == "/x.wav")
  }

  @Test("absolute files are only normalized")
  func resolveAbsolute() {
    #expect(
      SessionFile.resolve(file: "/data/./audio//x/../kick.wav", sessionPath: "/a/s.json")
        == "/data/audio/kick.wav")
  }

  @Test("a relative session path is taken from the current directory")
  func resolveRelativeSession() {
    let cwd = FileManager.default.currentDirectoryPath
    let expected = PathText.normalize(cwd + "/Sessions/x.flac")
    #expect(SessionFile.resolve(file: "x.flac", sessionPath: "Sessions/demo.json") == expected)
    #expect(SessionFile.resolve(file: "x.flac", sessionPath: "demo.json") == PathText.normalize(cwd + "/x.flac"))
    #expect(SessionFile.resolve(file: "x.flac", sessionPath: "demo.json").hasPrefix("/"))
  }

  @Test("stored paths are relative inside the session folder or its parent, absolute elsewhere")
  func storedPaths() {
    let session = "/work/main/Sessions/demo.json"
    #expect(SessionFile.storedPath(forAudioFile: "/work/main/Sessions/drums.flac", sessionPath: session) == "drums.flac")
    #expect(SessionFile.storedPath(forAudioFile: "/work/main/Sessions/stems/a.flac", sessionPath: session) == "stems/a.flac")
    #expect(
      SessionFile.storedPath(forAudioFile: "/work/main/Samples/drums.flac", sessionPath: session)
        == "../Samples/drums.flac")
    #expect(SessionFile.storedPath(forAudioFile: "/work/main/mix.wav", sessionPath: session) == "../mix.wav")
    #expect(SessionFile.storedPath(forAudioFile: "/srv/audio/x.flac", sessionPath: session) == "/srv/audio/x.flac")
    #expect(
      SessionFile.storedPath(forAudioFile: "/work/main/Sessions/../Samples/./x.flac", sessionPath: session)
        == "../Samples/x.flac")
    // A folder whose name merely starts with the session folder's name is not inside it.
    #expect(
      SessionFile.storedPath(forAudioFile: "/work/main/Sessions2/x.flac", sessionPath: session)
        == "../Sessions2/x.flac")
    #expect(SessionFile.storedPath(forAudioFile: "/work/mainline/x.flac", sessionPath: session) == "/work/mainline/x.flac")
    // Sessions in / or in a top-level folder do not get paths relative to /.
    #expect(SessionFile.storedPath(forAudioFile: "/x.flac", sessionPath: "/s.json") == "/x.flac")
    #expect(SessionFile.storedPath(forAudioFile: "/other/x.flac", sessionPath: "/top/s.json") == "/other/x.flac")
  }

  @Test(
    "resolve(storedPath(p)) gives back the normalized path",
    arguments: [
      "/work/main/Sessions/a.flac", "/work/main/Samples/b c.flac", "/work/x.flac", "/srv/y.wav",
      "/work/main/../main/Samples/./z.flac", "/"
    ])
  func storedPathRoundTrip(audio: String) {
    let session = "/work/main/Sessions/demo.json"
    let stored = SessionFile.storedPath(forAudioFile: audio, sessionPath: session)
    #expect(SessionFile.resolve(file: stored, sessionPath: session) == PathText.normalize(audio))
  }
}
