import Foundation
import Testing
@testable import StemdeckSession

/// A document that must be rejected, with where and why.
struct BadDocument: Sendable, CustomTestStringConvertible {
  var label: String
  var text: String
  /// The expected `SessionError.location` (nil: a whole-document problem).
  var location: String?
  /// Text the message must contain.
  var fragment: String
  /// The expected line, when the case pins it.
  var line: Int?

  var testDescription: String { label }
}

/// A valid document with the given top-level fields (one per line, after "version") and stems (one per
/// line). Stem `i` is on line `5 + top.count + i`.
func document(top: [String] = [], stems: [String] = [#"{ "name" : "drums", "file" : "d.flac" }"#]) -> String {
  var lines = ["{", #"  "format" : "stemdeck-session","#, #"  "version" : 3,"#]
  lines += top.map { "  " + $0 + "," }
  lines.append(#"  "stems" : ["#)
  lines.append(stems.map { "    " + $0 }.joined(separator: ",\n"))
  lines += ["  ]", "}"]
  return lines.joined(separator: "\n") + "\n"
}

/// A document with one stem made of `fields` after the name and file.
func stemDocument(_ fields: String, name: String = #""drums""#) -> String {
  document(stems: ["{ \"name\" : \(name), \"file\" : \"d.flac\"" + (fields.isEmpty ? "" : ", " + fields) + " }"])
}

/// A document whose `"effects"` list (on line 4) holds one effect made of `fields` after the name and file.
func effectDocument(_ fields: String, name: String = #""horn""#) -> String {
  document(top: [
    "\"effects\" : [ { \"name\" : \(name), \"file\" : \"h.wav\""
      + (fields.isEmpty ? "" : ", " + fields) + " } ]"
  ])
}

/// A document whose `"effects"` list starts on line 4 and holds one effect per line: effect `i` is on
/// line `5 + i`.
func effectsDocument(_ effects: [String]) -> String {
  document(top: ["\"effects\" : [\n" + effects.map { "    " + $0 }.joined(separator: ",\n") + "\n  ]"])
}

let badDocuments: [BadDocument] =
  [
    // Whole-document problems.
    BadDocument(
      label: "malformed JSON (missing comma)",
      text: "{\n  \"format\" : \"stemdeck-session\",\n  \"version\" : 1\n  \"stems\" : []\n}\n",
      location: nil, fragment: "expected ',' or '}' after a field", line: 4),
    BadDocument(
      label: "trailing comma", text: "{\n  \"format\" : \"stemdeck-session\",\n  \"version\" : 1,\n}",
      location: nil, fragment: "trailing comma is not allowed", line: 4),
    BadDocument(
      label: "unterminated document", text: "{\n  \"format\" : \"stemdeck-session\",\n",
      location: nil, fragment: "unexpected end of file", line: 3),
    BadDocument(label: "empty file", text: "", location: nil, fragment: "the file is empty", line: 1),
    BadDocument(label: "whitespace only", text: " \n\n ", location: nil, fragment: "the file is empty", line: 3),
    BadDocument(label: "top-level array", text: "[ 1, 2 ]", location: nil, fragment: "must be a JSON object", line: 1),
    BadDocument(
      label: "top-level string", text: "\"stemdeck-session\"", location: nil,
      fragment: "must be a JSON object { ... } (got \"stemdeck-session\")", line: 1),
    BadDocument(
      label: "text after the document", text: document() + "{}", location: nil,
      fragment: "after the end of the document", line: 8),
    BadDocument(
      label: "NaN literal", text: stemDocument(#""pan" : NaN"#), location: nil,
      fragment: "unexpected 'N'", line: 5),
    BadDocument(
      label: "leading zero", text: stemDocument(#""loops" : 03"#), location: nil,
      fragment: "invalid number", line: 5),
    BadDocument(
      label: "single quotes", text: stemDocument(#"'pan' : 1"#), location: nil,
      fragment: "expected a field name in double quotes", line: 5),
    BadDocument(
      label: "raw tab in a string", text: stemDocument("\"file\" : \"a\tb\""), location: nil,
      fragment: "control character", line: 5),
    BadDocument(
      label: "bad escape", text: stemDocument(#""mute" : "\x""#), location: nil,
      fragment: "invalid escape sequence", line: 5),
    BadDocument(
      label: "lone surrogate", text: stemDocument(#""mute" : "\ud800""#), location: nil,
      fragment: "high surrogate", line: 5),
    BadDocument(
      label: "deep nesting", text: String(repeating: "[", count: 10_000), location: nil,
      fragment: "nested too deeply", line: 1),
    BadDocument(
      label: "deep nesting inside a field",
      text: document(top: ["\"options\" : " + String(repeating: "{\"a\":", count: 100)]),
      location: nil, fragment: "nested too deeply", line: 4),

    // Header.
    BadDocument(
      label: "missing version", text: "{ \"format\" : \"stemdeck-session\", \"stems\" : [] }",
      location: "version", fragment: "is missing", line: 1),
    BadDocument(
      label: "version 4", text: document().replacingOccurrences(of: "\"version\" : 3", with: "\"version\" : 4"),
      location: nil,
      fragment: "was made by a newer version of stemdeck (format 4; this one reads up to 3); nothing was changed", line: 3),
    BadDocument(
      label: "version \"1\"",
      text: document().replacingOccurrences(of: "\"version\" : 3", with: "\"version\" : \"1\""),
      location: "version", fragment: "must be an integer format version such as 3 (got \"1\")", line: 3),
    BadDocument(
      label: "version 0", text: document().replacingOccurrences(of: "\"version\" : 3", with: "\"version\" : 0"),
      location: "version", fragment: "must be at least 1 (got 0)", line: 3),
    BadDocument(
      label: "version 1.5",
      text: document().replacingOccurrences(of: "\"version\" : 3", with: "\"version\" : 1.5"),
      location: "version", fragment: "must be an integer", line: 3),
    BadDocument(
      label: "format wrong",
      text: document().replacingOccurrences(of: "stemdeck-session", with: "stemdeck-setlist"),
      location: "format", fragment: "must be \"stemdeck-session\" (got \"stemdeck-setlist\")", line: 2),
    BadDocument(
      label: "format missing", text: "{ \"version\" : 1 }", location: "format",
      fragment: "is missing", line: 1),
    BadDocument(
      label: "unknown top-level key", text: document(top: [#""swing" : 0.5"#]),
      location: "swing",
      fragment:
        "unknown field (allowed: format, version, quality, master, options, recording, tempo, click, marks, position, connections, stems, effects, midi, buses, inputs, sends, scenes, recallSafe)",
      line: 4),
    BadDocument(
      label: "duplicate top-level key", text: document(top: [#""quality" : "fast""#, #""quality" : "best""#]),
      location: "quality", fragment: "appears more than once (first at line 4, column 3)", line: 5),

    // Stem values.
    BadDocument(
      label: "volume 3", text: stemDocument(#""volume" : 3"#), location: "stems[0].volume",
      fragment: "must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 3)", line: 5),
    BadDocument(
      label: "volume \"abc\"", text: stemDocument(#""volume" : "abc""#), location: "stems[0].volume",
      fragment: "(got \"abc\")", line: 5),
    BadDocument(
      label: "volume \"+7dB\" (above 2)", text: stemDocument(#""volume" : "+7dB""#),
      location: "stems[0].volume", fragment: "(got \"+7dB\", which is a gain of 2.239)", line: 5),
    BadDocument(
      label: "volume \"nan dB\"", text: stemDocument(#""volume" : "nan dB""#),
      location: "stems[0].volume", fragment: "(got \"nan dB\")", line: 5),
    BadDocument(
      label: "volume -0.5", text: stemDocument(#""volume" : -0.5"#), location: "stems[0].volume",
      fragment: "(got -0.5)", line: 5),
    BadDocument(
      label: "pan 7", text: stemDocument(#""pan" : 7"#), location: "stems[0].pan",
      fragment: "must be a number between -1 and 1 (got 7)", line: 5),
    BadDocument(
      label: "pan 1e400 (overflows a Double)", text: stemDocument(#""pan" : 1e400"#),
      location: "stems[0].pan", fragment: "(got 1e400)", line: 5),
    BadDocument(
      label: "rate 0.1", text: stemDocument(#""rate" : 0.1"#), location: "stems[0].rate",
      fragment: "must be a number between 0.5 and 2 (got 0.1)", line: 5),
    BadDocument(
      label: "rate null", text: stemDocument(#""rate" : null"#), location: "stems[0].rate",
      fragment: "(got null)", line: 5),
    BadDocument(
      label: "loops -2", text: stemDocument(#""loops" : -2"#), location: "stems[0].loops",
      fragment: "must be an integer from -1 (forever) up to 1000000 (got -2)", line: 5),
    BadDocument(
      label: "loops 1.5", text: stemDocument(#""loops" : 1.5"#), location: "stems[0].loops",
      fragment: "(got 1.5)", line: 5),
    BadDocument(
      label: "loops \"three\"",
      text: document(stems: [
        #"{ "name" : "a", "file" : "a.flac" }"#, #"{ "name" : "b", "file" : "b.flac", "loops" : "three" }"#
      ]),
      location: "stems[1].loops", fragment: "must be an integer from -1 (forever) up to 1000000 (got \"three\")",
      line: 6),
    BadDocument(
      label: "loops huge", text: stemDocument(#""loops" : 99999999999999999999999999"#),
      location: "stems[0].loops", fragment: "(got 99999999999999999999999999)", line: 5),
    BadDocument(
      label: "mute \"yes\"", text: stemDocument(#""mute" : "yes""#), location: "stems[0].mute",
      fragment: "must be true or false (got \"yes\")", line: 5),
    BadDocument(
      label: "solo 1", text: stemDocument(#""solo" : 1"#), location: "stems[0].solo",
      fragment: "must be true or false (got 1)", line: 5),
    BadDocument(
      label: "directOut \"true\"", text: stemDocument(#""directOut" : "true""#),
      location: "stems[0].directOut", fragment: "must be true or false", line: 5),
    BadDocument(
      label: "startOffset -1", text: stemDocument(#""startOffset" : -1"#),
      location: "stems[0].startOffset", fragment: "must be a number of seconds from 0 to 1000000 (got -1)", line: 5),
    BadDocument(
      label: "unknown stem key", text: stemDocument(#""vol" : 1"#), location: "stems[0].vol",
      fragment:
        "unknown field (allowed: name, file, volume, pan, width, rate, mute, solo, soloSafe, loops, directOut, startOffset, loopStart, loopEnd, crossfade, mode, stretch, pitch, eq, bus, sends, inserts); did you mean \"volume\"?",
      line: 5),
    BadDocument(
      label: "duplicate stem key", text: stemDocument(#""volume" : 1, "volume" : 0.5"#),
      location: "stems[0].volume", fragment: "appears more than once", line: 5),

    // Names and files.
    BadDocument(
      label: "duplicate names",
      text: document(stems: [
        #"{ "name" : "drums", "file" : "a.flac" }"#, #"{ "name" : "bass", "file" : "b.flac" }"#,
        #"{ "name" : "keys", "file" : "c.flac" }"#, #"{ "name" : "drums", "file" : "d.flac" }"#
      ]),
      location: "stems[3].name", fragment: "duplicate stem name 'drums' (also stems[0])", line: 8),
    BadDocument(
      label: "name \"all\"", text: stemDocument("", name: #""all""#), location: "stems[0].name",
      fragment: "is reserved", line: 5),
    BadDocument(
      label: "name \"ALL\"", text: stemDocument("", name: #""ALL""#), location: "stems[0].name",
      fragment: "is reserved", line: 5),
    BadDocument(
      label: "name with a space", text: stemDocument("", name: #""my drums""#), location: "stems[0].name",
      fragment: "invalid stem name \"my drums\": a space is not allowed (allowed: 1 to 64 ASCII letters, digits, '_', '-' and '.')",
      line: 5),
    BadDocument(
      label: "name with a colon", text: stemDocument("", name: #""a:b""#), location: "stems[0].name",
      fragment: "':' is not allowed", line: 5),
    BadDocument(
      label: "name non-ASCII", text: stemDocument("", name: #""drüms""#), location: "stems[0].name",
      fragment: "'ü' is not allowed", line: 5),
    BadDocument(
      label: "empty name", text: stemDocument("", name: #""""#), location: "stems[0].name",
      fragment: "must not be empty", line: 5),
    BadDocument(
      label: "name too long", text: stemDocument("", name: "\"" + String(repeating: "x", count: 65) + "\""),
      location: "stems[0].name", fragment: "is too long (65 characters; at most 64)", line: 5),
    BadDocument(
      label: "name a number", text: stemDocument("", name: "3"), location: "stems[0].name",
      fragment: "must be a stem name in double quotes (got 3)", line: 5),
    BadDocument(
      label: "missing name", text: document(stems: [#"{ "file" : "a.flac" }"#]),
      location: "stems[0].name", fragment: "is missing", line: 5),
    BadDocument(
      label: "missing file", text: document(stems: [#"{ "name" : "a" }"#]),
      location: "stems[0].file", fragment: "is missing", line: 5),
    BadDocument(
      label: "file empty", text: document(stems: [#"{ "name" : "a", "file" : "" }"#]),
      location: "stems[0].file", fragment: "must not be empty", line: 5),
    BadDocument(
      label: "file with NUL", text: document(stems: [#"{ "name" : "a", "file" : "a\u0000b" }"#]),
      location: "stems[0].file", fragment: "NUL", line: 5),
    BadDocument(
      label: "stems not an array", text: "{ \"format\" : \"stemdeck-session\", \"version\" : 1, \"stems\" : {} }",
      location: "stems", fragment: "must be an array of stems", line: 1),
    BadDocument(
      label: "stem not an object", text: document(stems: [#""drums""#]), location: "stems[0]",
      fragment: "must be an object such as", line: 5),

    // Sections.
    BadDocument(
      label: "quality \"ultra\"", text: document(top: [#""quality" : "ultra""#]), location: "quality",
      fragment: "unknown resampler quality \"ultra\" (allowed: linear, fast, medium, best)", line: 4),
    BadDocument(
      label: "quality 3", text: document(top: [#""quality" : 3"#]), location: "quality",
      fragment: "must be one of linear, fast, medium, best (got 3)", line: 4),
    BadDocument(
      label: "meterPoint \"middle\"", text: document(top: [#""options" : { "meterPoint" : "middle" }"#]),
      location: "options.meterPoint", fragment: "unknown meter point \"middle\" (allowed: pre, post)", line: 4),
    BadDocument(
      label: "options unknown key", text: document(top: [#""options" : { "autoPause" : true }"#]),
      location: "options.autoPause", fragment: "did you mean \"autoPauseOnDisconnect\"?", line: 4),
    BadDocument(
      label: "master not an object", text: document(top: [#""master" : 0.5"#]), location: "master",
      fragment: "must be an object such as { \"volume\" : 1 } (got 0.5)", line: 4),
    BadDocument(
      label: "master volume 2.5", text: document(top: [#""master" : { "volume" : 2.5 }"#]),
      location: "master.volume", fragment: "(got 2.5)", line: 4),
    BadDocument(
      label: "position -1", text: document(top: [#""position" : -1"#]), location: "position",
      fragment: "must be a number of seconds from 0 to 1000000 (got -1)", line: 4),
    BadDocument(
      label: "position string", text: document(top: [#""position" : "0:10""#]), location: "position",
      fragment: "(got \"0:10\")", line: 4),
    BadDocument(
      label: "connections an array", text: document(top: [#""connections" : [ "system:playback_1" ]"#]),
      location: "connections", fragment: "must be an object mapping stemdeck port names to lists of JACK ports",
      line: 4),
    BadDocument(
      label: "connections value not a list",
      text: document(top: [#""connections" : { "master_L" : "system:playback_1" }"#]),
      location: "connections.master_L", fragment: "must be a list of JACK port names", line: 4),
    BadDocument(
      label: "connections element not a string",
      text: document(top: [#""connections" : { "master_L" : [ "system:playback_1", 2 ] }"#]),
      location: "connections.master_L[1]", fragment: "must be a full JACK port name", line: 4),
    BadDocument(
      label: "connections element without client",
      text: document(top: [#""connections" : { "master_L" : [ "playback_1" ] }"#]),
      location: "connections.master_L[0]", fragment: "(got \"playback_1\")", line: 4),
    BadDocument(
      label: "connections key with a client part",
      text: document(top: [#""connections" : { "stemdeck:master_L" : [ "system:playback_1" ] }"#]),
      location: "connections[\"stemdeck:master_L\"]", fragment: "short name", line: 4),
    BadDocument(
      label: "connections duplicate peer",
      text: document(top: [#""connections" : { "master_L" : [ "system:playback_1", "system:playback_1" ] }"#]),
      location: "connections.master_L[1]", fragment: "duplicate connection", line: 4)
  ] + newSectionBadDocuments + musicalBadDocuments

/// Bad documents for the sections added without a version change: effects, recording and the
/// setlist crossfade options.
let newSectionBadDocuments: [BadDocument] = [
  // Effects: the list and its elements.
  BadDocument(
    label: "effects not an array", text: document(top: [#""effects" : { "horn" : "h.wav" }"#]),
    location: "effects", fragment: "must be an array of effects [ { \"name\" : ..., \"file\" : ... }, ... ] (got an object)",
    line: 4),
  BadDocument(
    label: "effects null", text: document(top: [#""effects" : null"#]),
    location: "effects", fragment: "(got null)", line: 4),
  BadDocument(
    label: "effect not an object", text: document(top: [#""effects" : [ "horn" ]"#]),
    location: "effects[0]", fragment: "must be an object such as { \"name\" : \"horn\", \"file\" : \"horn.wav\" } (got \"horn\")",
    line: 4),
  BadDocument(
    label: "top-level \"effect\" (typo)", text: document(top: [#""effect" : []"#]),
    location: "effect", fragment: "did you mean \"effects\"?", line: 4),
  BadDocument(
    label: "unknown effect key", text: effectDocument(#""vol" : 1"#), location: "effects[0].vol",
    fragment: "unknown field (allowed: name, file, volume, pan); did you mean \"volume\"?", line: 4),
  BadDocument(
    label: "stem-only key on an effect", text: effectDocument(#""loops" : 1"#),
    location: "effects[0].loops", fragment: "unknown field (allowed: name, file, volume, pan)", line: 4),
  BadDocument(
    label: "duplicate effect key", text: effectDocument(#""pan" : 0, "pan" : 1"#),
    location: "effects[0].pan", fragment: "appears more than once", line: 4),

  // Effects: names and files.
  BadDocument(
    label: "duplicate effect name",
    text: effectsDocument([
      #"{ "name" : "horn", "file" : "a.wav" }"#, #"{ "name" : "siren", "file" : "b.wav" }"#,
      #"{ "name" : "horn", "file" : "c.wav" }"#
    ]),
    location: "effects[2].name", fragment: "duplicate effect name 'horn' (also effects[0])", line: 7),
  BadDocument(
    label: "effect name a number", text: effectDocument("", name: "7"), location: "effects[0].name",
    fragment: "must be an effect name in double quotes (got 7)", line: 4),
  BadDocument(
    label: "effect name \"all\"", text: effectDocument("", name: #""all""#), location: "effects[0].name",
    fragment: "the effect name \"all\" is reserved (it means every effect in console commands)", line: 4),
  BadDocument(
    label: "effect name with a space", text: effectDocument("", name: #""air horn""#),
    location: "effects[0].name",
    fragment: "invalid effect name \"air horn\": a space is not allowed (allowed: 1 to 64 ASCII letters, digits, '_', '-' and '.')",
    line: 4),
  BadDocument(
    label: "empty effect name", text: effectDocument("", name: #""""#), location: "effects[0].name",
    fragment: "an effect name must not be empty", line: 4),
  BadDocument(
    label: "effect name too long", text: effectDocument("", name: "\"" + String(repeating: "h", count: 65) + "\""),
    location: "effects[0].name", fragment: "effect name \"hhhh", line: 4),
  BadDocument(
    label: "effect missing name", text: effectsDocument([#"{ "file" : "a.wav" }"#]),
    location: "effects[0].name", fragment: "is missing (every effect needs a name and a file)", line: 5),
  BadDocument(
    label: "effect missing file", text: effectsDocument([#"{ "name" : "a", "file" : "a.wav" }"#, #"{ "name" : "b" }"#]),
    location: "effects[1].file", fragment: "is missing (every effect needs a name and a file)", line: 6),
  BadDocument(
    label: "effect file empty", text: effectsDocument([#"{ "name" : "a", "file" : "" }"#]),
    location: "effects[0].file", fragment: "must not be empty", line: 5),
  BadDocument(
    label: "effect file with NUL", text: effectsDocument([#"{ "name" : "a", "file" : "a\u0000.wav" }"#]),
    location: "effects[0].file", fragment: "must not contain a NUL character", line: 5),
  BadDocument(
    label: "effect file a list", text: effectsDocument([#"{ "name" : "a", "file" : [ "a.wav" ] }"#]),
    location: "effects[0].file", fragment: "must be the audio file's path in double quotes (got an array)", line: 5),

  // Effects: volume and pan.
  BadDocument(
    label: "effect volume 3", text: effectDocument(#""volume" : 3"#), location: "effects[0].volume",
    fragment: "must be a number between 0 and 2, or a level in dB such as \"-6dB\" (got 3)", line: 4),
  BadDocument(
    label: "effect volume \"+7dB\"", text: effectDocument(#""volume" : "+7dB""#), location: "effects[0].volume",
    fragment: "(got \"+7dB\", which is a gain of 2.239)", line: 4),
  BadDocument(
    label: "effect volume \"loud\"", text: effectDocument(#""volume" : "loud""#), location: "effects[0].volume",
    fragment: "(got \"loud\")", line: 4),
  BadDocument(
    label: "effect volume true", text: effectDocument(#""volume" : true"#), location: "effects[0].volume",
    fragment: "(got true)", line: 4),
  BadDocument(
    label: "effect pan 1.5 on the second line",
    text: effectsDocument([#"{ "name" : "a", "file" : "a.wav" }"#, #"{ "name" : "b", "file" : "b.wav", "pan" : 1.5 }"#]),
    location: "effects[1].pan", fragment: "must be a number between -1 and 1 (got 1.5)", line: 6),
  BadDocument(
    label: "effect pan \"left\"", text: effectDocument(#""pan" : "left""#), location: "effects[0].pan",
    fragment: "must be a number between -1 and 1 (got \"left\")", line: 4),

  // Recording.
  BadDocument(
    label: "recording not an object", text: document(top: [#""recording" : "takes""#]), location: "recording",
    fragment: "must be an object such as { \"format\" : \"flac24\", \"takesMuted\" : false, \"folder\" : \"takes\" } (got \"takes\")",
    line: 4),
  BadDocument(
    label: "recording format \"mp3\"", text: document(top: [#""recording" : { "format" : "mp3" }"#]),
    location: "recording.format", fragment: "unknown take format \"mp3\" (allowed: flac24, wav32f, wav24)", line: 4),
  BadDocument(
    label: "recording format 24", text: document(top: [#""recording" : { "format" : 24 }"#]),
    location: "recording.format", fragment: "must be one of flac24, wav32f, wav24 (got 24)", line: 4),
  BadDocument(
    label: "recording format \"FLAC24\" (case matters)", text: document(top: [#""recording" : { "format" : "FLAC24" }"#]),
    location: "recording.format", fragment: "unknown take format \"FLAC24\"", line: 4),
  BadDocument(
    label: "recording takesMuted \"no\"", text: document(top: [#""recording" : { "takesMuted" : "no" }"#]),
    location: "recording.takesMuted", fragment: "must be true or false (got \"no\")", line: 4),
  BadDocument(
    label: "recording takesMuted 0", text: document(top: [#""recording" : { "takesMuted" : 0 }"#]),
    location: "recording.takesMuted", fragment: "must be true or false (got 0)", line: 4),
  BadDocument(
    label: "recording folder a number", text: document(top: [#""recording" : { "folder" : 5 }"#]),
    location: "recording.folder", fragment: "must be the takes folder's path in double quotes", line: 4),
  BadDocument(
    label: "recording folder null", text: document(top: [#""recording" : { "folder" : null }"#]),
    location: "recording.folder", fragment: "(got null)", line: 4),
  BadDocument(
    label: "recording folder with NUL", text: document(top: [#""recording" : { "folder" : "takes\u0000" }"#]),
    location: "recording.folder", fragment: "must not contain a NUL character", line: 4),
  BadDocument(
    label: "recording folder over 4096 bytes",
    text: document(top: ["\"recording\" : { \"folder\" : \"" + String(repeating: "é", count: 2049) + "\" }"]),
    location: "recording.folder", fragment: "is too long (4098 bytes; at most 4096)", line: 4),
  BadDocument(
    label: "recording unknown key", text: document(top: [#""recording" : { "fromat" : "wav24" }"#]),
    location: "recording.fromat",
    fragment: "unknown field (allowed: format, takesMuted, folder); did you mean \"format\"?", line: 4),
  BadDocument(
    label: "recording key prefix", text: document(top: [#""recording" : { "takesMute" : true }"#]),
    location: "recording.takesMute", fragment: "did you mean \"takesMuted\"?", line: 4),
  BadDocument(
    label: "recording duplicate key",
    text: document(top: [#""recording" : { "format" : "wav24", "format" : "wav24" }"#]),
    location: "recording.format", fragment: "appears more than once (first at line 4, column 19)", line: 4),
  BadDocument(
    label: "top-level \"record\" (typo)", text: document(top: [#""record" : {}"#]),
    location: "record", fragment: "did you mean \"recording\"?", line: 4),
  BadDocument(
    label: "duplicate recording section",
    text: document(top: [#""recording" : {}"#, #""recording" : { "takesMuted" : true }"#]),
    location: "recording", fragment: "appears more than once (first at line 4, column 3)", line: 5),

  // Setlist crossfade options.
  BadDocument(
    label: "songChange \"fade\"", text: document(top: [#""options" : { "songChange" : "fade" }"#]),
    location: "options.songChange", fragment: "unknown song change \"fade\" (allowed: gapless, crossfade)", line: 4),
  BadDocument(
    label: "songChange true", text: document(top: [#""options" : { "songChange" : true }"#]),
    location: "options.songChange", fragment: "must be one of gapless, crossfade (got true)", line: 4),
  BadDocument(
    label: "crossfadeSeconds 0.01", text: document(top: [#""options" : { "crossfadeSeconds" : 0.01 }"#]),
    location: "options.crossfadeSeconds", fragment: "must be a number of seconds from 0.05 to 30 (got 0.01)", line: 4),
  BadDocument(
    label: "crossfadeSeconds 30.5",
    text: document(top: [#""options" : { "songChange" : "crossfade", "crossfadeSeconds" : 30.5 }"#]),
    location: "options.crossfadeSeconds", fragment: "(got 30.5)", line: 4),
  BadDocument(
    label: "crossfadeSeconds 0", text: document(top: [#""options" : { "crossfadeSeconds" : 0 }"#]),
    location: "options.crossfadeSeconds", fragment: "(got 0)", line: 4),
  BadDocument(
    label: "crossfadeSeconds \"2s\"", text: document(top: [#""options" : { "crossfadeSeconds" : "2s" }"#]),
    location: "options.crossfadeSeconds", fragment: "(got \"2s\")", line: 4),
  BadDocument(
    label: "crossfadeSeconds 1e999", text: document(top: [#""options" : { "crossfadeSeconds" : 1e999 }"#]),
    location: "options.crossfadeSeconds", fragment: "(got 1e999)", line: 4),
  BadDocument(
    label: "options \"crossfade\" key (prefix)", text: document(top: [#""options" : { "crossfade" : 2 }"#]),
    location: "options.crossfade",
    fragment:
      "unknown field (allowed: autoPauseOnDisconnect, meterPoint, songChange, crossfadeSeconds, transportSync, effectsOutput); did you mean \"crossfadeSeconds\"?",
    line: 4),
  BadDocument(
    label: "options duplicate songChange",
    text: document(top: [#""options" : { "songChange" : "gapless", "songChange" : "crossfade" }"#]),
    location: "options.songChange", fragment: "appears more than once", line: 4)
]

/// Bad documents for the tempo, the stems' loop regions, crossfade, rate mode and pitch, and the
/// transport sync option (added without a version change).
let musicalBadDocuments: [BadDocument] = [
  // The click.
  BadDocument(
    label: "click level 9", text: document(top: [#""click" : { "on" : true, "level" : 9 }"#]), location: "click.level",
    fragment: "must be a level in dB from -60 to 6 (got 9)", line: 4),
  BadDocument(
    label: "click countIn 1.5", text: document(top: [#""click" : { "countIn" : 1.5 }"#]), location: "click.countIn",
    fragment: "must be a whole number of bars from 0 to 16 (got 1.5)", line: 4),
  BadDocument(
    label: "click output \"monitors\"", text: document(top: [#""click" : { "output" : "monitors" }"#]),
    location: "click.output", fragment: "unknown click output \"monitors\" (allowed: click, master)", line: 4),
  BadDocument(
    label: "click unknown key", text: document(top: [#""click" : { "volume" : 1 }"#]), location: "click.volume",
    fragment: "unknown field (allowed: on, output, level, countIn, sample, accentSample)", line: 4),
  // Tempo.
  BadDocument(
    label: "tempo a number", text: document(top: [#""tempo" : 120"#]), location: "tempo",
    fragment: "must be an object such as { \"bpm\" : 120, \"beatsPerBar\" : 4 } (got 120)", line: 4),
  BadDocument(
    label: "tempo null", text: document(top: [#""tempo" : null"#]), location: "tempo",
    fragment: "(got null)", line: 4),
  BadDocument(
    label: "tempo without bpm", text: document(top: [#""tempo" : {}"#]), location: "tempo.bpm",
    fragment: "is missing (a tempo needs its beats per minute, e.g. { \"bpm\" : 120, \"beatsPerBar\" : 4 })",
    line: 4),
  BadDocument(
    label: "tempo with only beatsPerBar", text: document(top: [#""tempo" : { "beatsPerBar" : 3 }"#]),
    location: "tempo.bpm", fragment: "is missing", line: 4),
  BadDocument(
    label: "bpm \"120\"", text: document(top: [#""tempo" : { "bpm" : "120" }"#]), location: "tempo.bpm",
    fragment: "must be a number of beats per minute from 20 to 400 (got \"120\")", line: 4),
  BadDocument(
    label: "bpm 19.5", text: document(top: [#""tempo" : { "bpm" : 19.5 }"#]), location: "tempo.bpm",
    fragment: "(got 19.5)", line: 4),
  BadDocument(
    label: "bpm 400.5", text: document(top: [#""tempo" : { "bpm" : 400.5, "beatsPerBar" : 4 }"#]),
    location: "tempo.bpm", fragment: "(got 400.5)", line: 4),
  BadDocument(
    label: "bpm 1e999", text: document(top: [#""tempo" : { "bpm" : 1e999 }"#]), location: "tempo.bpm",
    fragment: "(got 1e999)", line: 4),
  BadDocument(
    label: "beatsPerBar 0", text: document(top: [#""tempo" : { "bpm" : 120, "beatsPerBar" : 0 }"#]),
    location: "tempo.beatsPerBar", fragment: "must be an integer number of beats per bar from 1 to 32 (got 0)",
    line: 4),
  BadDocument(
    label: "beatsPerBar 33", text: document(top: [#""tempo" : { "bpm" : 120, "beatsPerBar" : 33 }"#]),
    location: "tempo.beatsPerBar", fragment: "(got 33)", line: 4),
  BadDocument(
    label: "beatsPerBar 3.5", text: document(top: [#""tempo" : { "bpm" : 120, "beatsPerBar" : 3.5 }"#]),
    location: "tempo.beatsPerBar", fragment: "(got 3.5)", line: 4),
  BadDocument(
    label: "beatsPerBar \"4\"", text: document(top: [#""tempo" : { "bpm" : 120, "beatsPerBar" : "4" }"#]),
    location: "tempo.beatsPerBar", fragment: "must be an integer number of beats per bar from 1 to 32 (got \"4\")",
    line: 4),
  BadDocument(
    label: "tempo unknown key", text: document(top: [#""tempo" : { "BPM" : 120 }"#]), location: "tempo.BPM",
    fragment: "unknown field (allowed: bpm, beatsPerBar); did you mean \"bpm\"?", line: 4),
  BadDocument(
    label: "tempo key prefix", text: document(top: [#""tempo" : { "bpm" : 120, "beats" : 3 }"#]),
    location: "tempo.beats", fragment: "did you mean \"beatsPerBar\"?", line: 4),
  BadDocument(
    label: "tempo duplicate key", text: document(top: [#""tempo" : { "bpm" : 120, "bpm" : 90 }"#]),
    location: "tempo.bpm", fragment: "appears more than once (first at line 4, column 15)", line: 4),
  BadDocument(
    label: "top-level \"temp\" (typo)", text: document(top: [#""temp" : { "bpm" : 120 }"#]),
    location: "temp", fragment: "did you mean \"tempo\"?", line: 4),
  BadDocument(
    label: "top-level \"bpm\"", text: document(top: [#""bpm" : 120"#]), location: "bpm",
    fragment: "unknown field (allowed: format, version", line: 4),

  // Loop region.
  BadDocument(
    label: "loopStart \"1.25\"", text: stemDocument(#""loopStart" : "1.25", "loopEnd" : 9.25"#),
    location: "stems[0].loopStart",
    fragment: "must be a number of seconds in the stem's audio file from 0 to 86400 (got \"1.25\")", line: 5),
  BadDocument(
    label: "loopStart -0.5", text: stemDocument(#""loopStart" : -0.5, "loopEnd" : 2"#),
    location: "stems[0].loopStart", fragment: "(got -0.5)", line: 5),
  BadDocument(
    label: "loopEnd 86400.5", text: stemDocument(#""loopStart" : 0, "loopEnd" : 86400.5"#),
    location: "stems[0].loopEnd", fragment: "from 0 to 86400 (got 86400.5)", line: 5),
  BadDocument(
    label: "loopEnd null", text: stemDocument(#""loopStart" : 0, "loopEnd" : null"#),
    location: "stems[0].loopEnd", fragment: "(got null)", line: 5),
  BadDocument(
    label: "loopEnd a list", text: stemDocument(#""loopStart" : 0, "loopEnd" : [ 1 ]"#),
    location: "stems[0].loopEnd", fragment: "(got an array)", line: 5),
  BadDocument(
    label: "only loopStart", text: stemDocument(#""loopStart" : 1.25"#), location: "stems[0].loopEnd",
    fragment:
      "is missing: a loop region needs both \"loopStart\" and \"loopEnd\" (only \"loopStart\" is given; remove it for no loop region)",
    line: 5),
  BadDocument(
    label: "only loopEnd, second stem",
    text: document(stems: [
      #"{ "name" : "a", "file" : "a.flac", "loopStart" : 0, "loopEnd" : 1 }"#,
      #"{ "name" : "b", "file" : "b.flac", "loopEnd" : 9.25 }"#
    ]),
    location: "stems[1].loopStart", fragment: "(only \"loopEnd\" is given; remove it for no loop region)", line: 6),
  BadDocument(
    label: "loopStart equal to loopEnd", text: stemDocument(#""loopStart" : 2, "loopEnd" : 2"#),
    location: "stems[0].loopEnd", fragment: "must be greater than loopStart (got loopStart 2, loopEnd 2)", line: 5),
  BadDocument(
    label: "loopStart after loopEnd", text: stemDocument(#""loopStart" : 9.25, "loopEnd" : 1.25"#),
    location: "stems[0].loopEnd", fragment: "(got loopStart 9.25, loopEnd 1.25)", line: 5),
  BadDocument(
    label: "loopEnd before loopStart, reversed keys", text: stemDocument(#""loopEnd" : 0, "loopStart" : 0.001"#),
    location: "stems[0].loopEnd", fragment: "(got loopStart 0.001, loopEnd 0)", line: 5),
  BadDocument(
    label: "loopstart (case)", text: stemDocument(#""loopstart" : 1, "loopEnd" : 2"#),
    location: "stems[0].loopstart", fragment: "did you mean \"loopStart\"?", line: 5),
  BadDocument(
    label: "loop_end (typo)", text: stemDocument(#""loopStart" : 1, "loop_end" : 2"#),
    location: "stems[0].loop_end", fragment: "did you mean \"loopEnd\"?", line: 5),
  BadDocument(
    label: "duplicate loopStart", text: stemDocument(#""loopStart" : 1, "loopStart" : 2, "loopEnd" : 3"#),
    location: "stems[0].loopStart", fragment: "appears more than once", line: 5),
  BadDocument(
    label: "loop fields on an effect", text: effectDocument(#""loopStart" : 0, "loopEnd" : 1"#),
    location: "effects[0].loopStart", fragment: "unknown field (allowed: name, file, volume, pan)", line: 4),

  // Loop crossfade, rate mode, pitch.
  BadDocument(
    label: "crossfade 1.5", text: stemDocument(#""crossfade" : 1.5"#), location: "stems[0].crossfade",
    fragment: "must be a number of seconds from 0 to 1 (the crossfade at the loop seam; 0 for none) (got 1.5)",
    line: 5),
  BadDocument(
    label: "crossfade -0.1", text: stemDocument(#""crossfade" : -0.1"#), location: "stems[0].crossfade",
    fragment: "(got -0.1)", line: 5),
  BadDocument(
    label: "crossfade \"5ms\"", text: stemDocument(#""crossfade" : "5ms""#), location: "stems[0].crossfade",
    fragment: "(got \"5ms\")", line: 5),
  BadDocument(
    label: "crossfade true", text: stemDocument(#""crossfade" : true"#), location: "stems[0].crossfade",
    fragment: "(got true)", line: 5),
  BadDocument(
    label: "mode \"timestretch\"", text: stemDocument(#""mode" : "timestretch""#), location: "stems[0].mode",
    fragment: "unknown rate mode \"timestretch\" (allowed: varispeed, stretch)", line: 5),
  BadDocument(
    label: "mode \"Stretch\" (case matters)", text: stemDocument(#""mode" : "Stretch""#),
    location: "stems[0].mode", fragment: "unknown rate mode \"Stretch\"", line: 5),
  BadDocument(
    label: "mode 1", text: stemDocument(#""mode" : 1"#), location: "stems[0].mode",
    fragment: "must be one of varispeed, stretch (got 1)", line: 5),
  BadDocument(
    label: "mode null", text: stemDocument(#""mode" : null"#), location: "stems[0].mode",
    fragment: "must be one of varispeed, stretch (got null)", line: 5),
  BadDocument(
    label: "stretch \"wsola\"", text: stemDocument(#""mode" : "stretch", "stretch" : "wsola""#), location: "stems[0].stretch",
    fragment: "unknown stretch quality \"wsola\" (allowed: fine, fast)", line: 5),
  BadDocument(
    label: "stretch true", text: stemDocument(#""mode" : "stretch", "stretch" : true"#), location: "stems[0].stretch",
    fragment: "must be one of fine, fast (got true)", line: 5),
  BadDocument(
    label: "pitch 24.5", text: stemDocument(#""mode" : "stretch", "pitch" : 24.5"#), location: "stems[0].pitch",
    fragment: "must be a number of semitones from -24 to 24 (got 24.5)", line: 5),
  BadDocument(
    label: "pitch -25 in varispeed mode", text: stemDocument(#""pitch" : -25"#), location: "stems[0].pitch",
    fragment: "(got -25)", line: 5),
  // Issue 17: the REPL refuses `pitch` in varispeed mode, and so does the file (it was ignored).
  BadDocument(
    label: "pitch 3 in varispeed mode (by default)", text: stemDocument(#""pitch" : 3"#), location: "stems[0].pitch",
    fragment:
      "a pitch shift needs \"mode\" : \"stretch\" (in varispeed the pitch follows the rate; 0 is the only pitch allowed) (got 3 in varispeed mode)",
    line: 5),
  BadDocument(
    label: "pitch -0.5 before \"mode\" : \"varispeed\"", text: stemDocument(#""pitch" : -0.5, "mode" : "varispeed""#),
    location: "stems[0].pitch", fragment: "(got -0.5 in varispeed mode)", line: 5),
  BadDocument(
    label: "pitch \"+2\"", text: stemDocument(#""pitch" : "+2""#), location: "stems[0].pitch",
    fragment: "(got \"+2\")", line: 5),
  BadDocument(
    label: "pitch null", text: stemDocument(#""pitch" : null"#), location: "stems[0].pitch",
    fragment: "(got null)", line: 5),
  BadDocument(
    label: "mod (prefix)", text: stemDocument(#""mod" : "stretch""#), location: "stems[0].mod",
    fragment: "did you mean \"mode\"?", line: 5),

  // Transport sync.
  BadDocument(
    label: "transportSync \"master\"", text: document(top: [#""options" : { "transportSync" : "master" }"#]),
    location: "options.transportSync", fragment: "unknown transport sync \"master\" (allowed: off, follow, lead)",
    line: 4),
  BadDocument(
    label: "transportSync false", text: document(top: [#""options" : { "transportSync" : false }"#]),
    location: "options.transportSync", fragment: "must be one of off, follow, lead (got false)", line: 4),
  BadDocument(
    label: "transportSync \"Follow\" (case matters)",
    text: document(top: [#""options" : { "transportSync" : "Follow" }"#]),
    location: "options.transportSync", fragment: "unknown transport sync \"Follow\"", line: 4),
  BadDocument(
    label: "options \"transport\" (prefix)", text: document(top: [#""options" : { "transport" : "follow" }"#]),
    location: "options.transport", fragment: "did you mean \"transportSync\"?", line: 4),
  BadDocument(
    label: "top-level transportSync", text: document(top: [#""transportSync" : "follow""#]),
    location: "transportSync", fragment: "unknown field (allowed: format", line: 4),

  // Where sound effects play.
  BadDocument(
    label: "effectsOutput \"cue\"", text: document(top: [#""options" : { "effectsOutput" : "cue" }"#]),
    location: "options.effectsOutput", fragment: "unknown effects output \"cue\" (allowed: master, ports)", line: 4),
  BadDocument(
    label: "effectsOutput 1", text: document(top: [#""options" : { "effectsOutput" : 1 }"#]),
    location: "options.effectsOutput", fragment: "must be one of master, ports (got 1)", line: 4)
]

@Suite("Rejecting bad documents")
struct BadDocumentTests {
  @Test("each bad document is rejected with its location and reason", arguments: badDocuments)
  func rejected(_ bad: BadDocument) {
    do {
      let session = try SessionFile.decode(Data(bad.text.utf8), source: "Sessions/bad.json")
      Issue.record("decoded instead of failing: \(session)")
    } catch {
      #expect(error.file == "Sessions/bad.json")
      #expect(error.location == bad.location, "\(error)")
      #expect(error.message.contains(bad.fragment), "\(error)")
      if let line = bad.line { #expect(error.line == line, "\(error)") }
      #expect(error.column != nil)
      #expect(error.description.hasPrefix("Sessions/bad.json: "))
    }
  }

  @Test("the column points at the offending value")
  func columnOfValue() throws {
    let text = stemDocument(#""pan" : 7"#)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let stemLine = String(lines[4])
    let offset = try #require(stemLine.range(of: ": 7")).upperBound
    let expectedColumn = stemLine.distance(from: stemLine.startIndex, to: offset)  // 1-based column of "7"
    #expect(
      throws: SessionError(
        file: "test.json", location: "stems[0].pan", line: 5, column: expectedColumn,
        message: "must be a number between -1 and 1 (got 7)")
    ) {
      try decode(text)
    }
  }

  @Test("columns count characters, not bytes")
  func columnCountsCharacters() {
    // "é" is two bytes in UTF-8 but one column.
    let text = "{ \"format\" : \"é\", \"version\" : 1 }"
    do {
      _ = try decode(text)
      Issue.record("expected an error")
    } catch {
      #expect(error.location == "format")
      #expect(error.column == 14)
    }
    let syntax = "{ \"é\" : 1 x }"
    do {
      _ = try decode(syntax)
      Issue.record("expected an error")
    } catch {
      #expect(error.location == nil)
      #expect(error.column == 11)
    }
  }

  @Test("edge values that are allowed")
  func allowedEdges() throws {
    let text = document(stems: [
      #"{ "name" : "a", "file" : "a.flac", "volume" : 2, "pan" : -1, "rate" : 0.5, "loops" : -1 }"#,
      #"{ "name" : "b", "file" : "b.flac", "volume" : 0, "pan" : 1, "rate" : 2, "loops" : 1000000 }"#,
      #"{ "name" : "B.b-_9", "file" : "/abs.flac", "volume" : "-200dB", "loops" : 3.0, "startOffset" : 1000000 }"#,
      #"{ "name" : "Drums", "file" : "c.flac" }"#,
      #"{ "name" : "drums", "file" : "c.flac" }"#
    ])
    let session = try decode(text)
    #expect(session.stems.count == 5)
    #expect(session.stems[2].volume == 0)
    #expect(session.stems[2].loops == 3)
    #expect(session.stems[0].loops == -1)
    let empty = try decode(document(stems: []))
    #expect(empty.stems.isEmpty)
  }

  @Test("the loop-region errors point at the right place")
  func loopRegionColumns() throws {
    // start ≥ end: the column of the loopEnd value.
    let reversed = stemDocument(#""loopStart" : 9.25, "loopEnd" : 1.25"#)
    /// The 1-based column of the value after `key` on the stem's line (line 5).
    func column(of key: String, in text: String) throws -> Int {
      let line = String(text.split(separator: "\n", omittingEmptySubsequences: false)[4])
      let colon = try #require(line.range(of: "\"\(key)\" : ")).upperBound
      return line.distance(from: line.startIndex, to: colon) + 1
    }
    let endColumn = try column(of: "loopEnd", in: reversed)
    #expect(endColumn == 76)
    #expect(
      throws: SessionError(
        file: "test.json", location: "stems[0].loopEnd", line: 5, column: endColumn,
        message: "must be greater than loopStart (got loopStart 9.25, loopEnd 1.25)")
    ) {
      try decode(reversed)
    }
    // Half a region: like any missing field, the column of the stem's "{".
    #expect(
      throws: SessionError(
        file: "test.json", location: "stems[0].loopEnd", line: 5, column: 5,
        message: "is missing: a loop region needs both \"loopStart\" and \"loopEnd\" "
          + "(only \"loopStart\" is given; remove it for no loop region)")
    ) {
      try decode(stemDocument(#""loopStart" : 1.25"#))
    }
    // A value out of range is reported before a missing partner.
    let early = stemDocument(#""loopStart" : -1"#)
    #expect(
      throws: SessionError(
        file: "test.json", location: "stems[0].loopStart", line: 5,
        column: try column(of: "loopStart", in: early),
        message: "must be a number of seconds in the stem's audio file from 0 to 86400 (got -1)")
    ) {
      try decode(early)
    }
  }

  @Test("edge values of the musical fields that are allowed")
  func allowedMusicalEdges() throws {
    let text = document(
      top: [
        #""options" : { "transportSync" : "follow" }"#,
        #""tempo" : { "bpm" : 20, "beatsPerBar" : 32.0 }"#
      ],
      stems: [
        #"{ "name" : "a", "file" : "a.flac", "loopStart" : 0, "loopEnd" : 86400, "crossfade" : 1, "mode" : "stretch", "pitch" : -24 }"#,
        #"{ "name" : "b", "file" : "b.flac", "loopStart" : 86399.999, "loopEnd" : 86400, "crossfade" : 0, "mode" : "stretch", "pitch" : 24 }"#,
        #"{ "name" : "c", "file" : "c.flac", "loopEnd" : 1e-9, "loopStart" : 0, "mode" : "varispeed", "pitch" : 0 }"#
      ])
    let session = try decode(text)
    #expect(session.options.transportSync == .follow)
    #expect(session.tempo == Tempo(bpm: 20, beatsPerBar: 32))
    #expect(session.stems[0].loopStart == 0 && session.stems[0].loopEnd == 86400)
    #expect(session.stems[0].crossfade == 1 && session.stems[0].pitch == -24 && session.stems[0].mode == .stretch)
    #expect(session.stems[1].mode == .stretch && session.stems[1].pitch == 24)
    #expect(session.stems[2].loopEnd == 1e-9)
    #expect(
      try decode(document(top: [#""tempo" : { "bpm" : 400, "beatsPerBar" : 1 }"#])).tempo
        == Tempo(bpm: 400, beatsPerBar: 1))
    for sync in TransportSync.allCases {
      let chosen = try decode(document(top: ["\"options\" : { \"transportSync\" : \"\(sync.rawValue)\" }"]))
      #expect(chosen.options.transportSync == sync)
    }
  }

  @Test("edge values of the new sections that are allowed")
  func allowedNewSectionEdges() throws {
    let text = document(top: [
      #""options" : { "songChange" : "crossfade", "crossfadeSeconds" : 0.05 }"#,
      "\"recording\" : { \"format\" : \"wav24\", \"takesMuted\" : true, \"folder\" : \""
        + String(repeating: "é", count: 2048) + "\" }",
      #""effects" : [ { "name" : "drums", "file" : "/abs.wav", "volume" : 0, "pan" : -1 }, "#
        + #"{ "name" : "Drums", "file" : "d.wav", "volume" : "-200dB", "pan" : 1 }, "#
        + #"{ "name" : "B.b-_9", "file" : "b.wav", "volume" : 2 } ]"#
    ])
    let session = try decode(text)  // the stem "drums" and the effect "drums" may share a name
    #expect(session.options.crossfadeSeconds == 0.05)
    #expect(session.recording.folder.utf8.count == 4096)
    #expect(session.recording.format == .wav24 && session.recording.takesMuted)
    #expect(session.effects.map(\.name) == ["drums", "Drums", "B.b-_9"])
    #expect(session.effects[1].volume == 0)
    #expect(session.effects[2].pan == 0)
    let longest = try decode(document(top: [#""options" : { "crossfadeSeconds" : 30 }"#]))
    #expect(longest.options.crossfadeSeconds == 30)
    for format in TakeFormat.allCases {
      let chosen = try decode(document(top: ["\"recording\" : { \"format\" : \"\(format.rawValue)\" }"]))
      #expect(chosen.recording.format == format)
    }
  }
}
