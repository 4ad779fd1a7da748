// The strip controls of a stem, bus or input in a session file, read by the strip controls'
// table (StripParameter.swift): each row's session key, its value read as the row says (a gain
// takes dB text too; a number its rule; a toggle true or false). A new row with a `field` is
// read and written (SessionEncoder.swift) without a line here.

extension SessionDecoder {
  /// Reads the strip controls that `fields` holds into `strip`, for a strip of `kind`.
  func stripControls(
    _ fields: [String: JSONNode], of kind: StripKind, into strip: inout StripSettings, at base: String
  ) throws(SessionError) {
    for control in StripParameter.all where control.kinds.contains(kind) {
      guard let field = control.field, let node = fields[control.key] else { continue }
      let path = base + "." + control.key
      switch (field, control.value) {
      case (.toggle(let keyPath), _): strip[keyPath: keyPath] = try bool(node, at: path)
      case (.number(let keyPath), .gain): strip[keyPath: keyPath] = try volume(node, at: path)
      case (.number(let keyPath), _):
        guard let rule = control.rule else { continue }
        strip[keyPath: keyPath] = try number(node, at: path, rule: rule)
      }
    }
  }

  /// Reads a stem's or a bus's `"eq"`, `"inserts"`, `"bus"` and `"sends"` (in that order: the
  /// first one wrong is the one told) into `strip`. An input reads its own: its bus must exist.
  func stripRouting(_ fields: [String: JSONNode], into strip: inout StripSettings, at base: String) throws(SessionError) {
    if let node = fields["eq"] { strip.eq = try eq(node, at: base + ".eq") }
    if let node = fields["inserts"] { strip.inserts = try inserts(node, at: base + ".inserts") }
    if let node = fields["bus"] { strip.bus = try destination(node, at: base + ".bus") }
    if let node = fields["sends"] { strip.sends = try stemSends(node, at: base + ".sends") }
  }
}
