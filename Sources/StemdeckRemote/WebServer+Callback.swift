import CWebSockets
import Foundation
import StemdeckLive

// libwebsockets' callback (one protocol, "stemdeck", for the HTTP files and the WebSocket), on
// the web thread: the bundled files, the checks before a WebSocket opens (path, Origin, Host,
// token, room), and the messages both ways (WebServer.swift).

/// The C entry libwebsockets calls for every connection; the server through the context's user
/// pointer, the connection's `WebSlot` through `user`.
package func webCallback(
  _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
  _ length: Int
) -> Int32 {
  guard let wsi, let raw = lws_context_user(lws_get_context(wsi)) else { return 0 }
  let server = Unmanaged<WebServer>.fromOpaque(raw).takeUnretainedValue()
  return server.handle(wsi, reason, user?.assumingMemoryBound(to: WebSlot.self), input, length)
}

/// A file of the page, served from memory (WebAssets.swift).
package struct WebAsset: Sendable {
  package let path: String
  package let type: String
  package let bytes: [UInt8]
}

extension WebServer {
  package static let pre = Int(stemdeck_lws_pre())

  package func handle(
    _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ slot: UnsafeMutablePointer<WebSlot>?, _ input: UnsafeMutableRawPointer?,
    _ length: Int
  ) -> Int32 {
    switch reason {
    case LWS_CALLBACK_HTTP:
      guard let slot, let input else { return -1 }
      return serve(wsi, slot, path: String(cString: input.assumingMemoryBound(to: CChar.self)))
    case LWS_CALLBACK_HTTP_WRITEABLE:
      guard let slot, slot.pointee.kind == 1 else { return -1 }
      return writeFile(wsi, slot)
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
      if let why = refusal(wsi) { return refuse(wsi, 403, why) }
      return 0
    case LWS_CALLBACK_ESTABLISHED:
      guard let slot else { return -1 }
      return open(wsi, slot) ? 0 : -1
    case LWS_CALLBACK_RECEIVE:
      guard let s = session(slot) else { return -1 }
      return receive(s, input, length)
    case LWS_CALLBACK_SERVER_WRITEABLE:
      guard let s = session(slot) else { return -1 }
      return writeMessage(s)
    case LWS_CALLBACK_CLOSED:
      if let slot { closed(slot) }
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
      pumpAll()
    default: break
    }
    return 0
  }

  private func session(_ slot: UnsafeMutablePointer<WebSlot>?) -> WebSession? {
    guard let slot, slot.pointee.kind == 2 else { return nil }
    return sessions[slot.pointee.value]
  }

  // MARK: - Files

  /// Headers every response carries: nothing but this origin may load or be loaded, no
  /// guessing of types, nothing cached (a new stemdeck serves its own page).
  private static let headers: [(name: [UInt8], value: [UInt8])] = [
    (
      "content-security-policy:",
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    ("x-content-type-options:", "nosniff"),
    ("cache-control:", "no-store"),
    ("referrer-policy:", "no-referrer"),
    ("x-frame-options:", "DENY")
  ].map { (Array($0.0.utf8) + [0], Array($0.1.utf8)) }

  /// Answers a GET of a bundled file (`/` is index.html); anything else is 404 (405 for
  /// another method). No path from a request reaches the file system.
  private func serve(_ wsi: OpaquePointer, _ slot: UnsafeMutablePointer<WebSlot>, path: String) -> Int32 {
    guard lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0 else { return refuse(wsi, 405, "only GET") }
    guard let index = assetList.firstIndex(where: { $0.path == (path == "/" ? "/index.html" : path) }) else {
      return refuse(wsi, 404, "not a file of the web mixer")
    }
    let asset = assetList[index]
    slot.pointee = WebSlot(kind: 1, value: index)
    var buffer = [UInt8](repeating: 0, count: Self.pre + 2048)
    return buffer.withUnsafeMutableBufferPointer { b -> Int32 in
      let start = b.baseAddress! + Self.pre
      let end = b.baseAddress! + b.count - 1
      var p: UnsafeMutablePointer<UInt8>? = start
      guard lws_add_http_common_headers(wsi, 200, asset.type, lws_filepos_t(asset.bytes.count), &p, end) == 0 else { return -1 }
      for h in Self.headers {
        guard lws_add_http_header_by_name(wsi, h.name, h.value, Int32(h.value.count), &p, end) == 0 else { return -1 }
      }
      guard lws_finalize_write_http_header(wsi, start, &p, end) == 0 else { return -1 }
      lws_callback_on_writable(wsi)
      return 0
    }
  }

  /// The next part of a file (8 KiB a call), then the transaction is complete.
  private func writeFile(_ wsi: OpaquePointer, _ slot: UnsafeMutablePointer<WebSlot>) -> Int32 {
    let body = assetList[slot.pointee.value].bytes
    let offset = slot.pointee.offset
    let count = min(8192, body.count - offset)
    let last = offset + count >= body.count
    var buffer = [UInt8](repeating: 0, count: Self.pre + count)
    buffer.replaceSubrange(Self.pre..., with: body[offset..<(offset + count)])
    let written = buffer.withUnsafeMutableBufferPointer {
      lws_write(wsi, $0.baseAddress! + Self.pre, count, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
    }
    guard written == count else { return -1 }
    slot.pointee.offset += count
    if last { return lws_http_transaction_completed(wsi) != 0 ? -1 : 0 }
    lws_callback_on_writable(wsi)
    return 0
  }

  /// An HTTP status with a short text; a WebSocket refused this way never opens.
  private func refuse(_ wsi: OpaquePointer, _ code: UInt32, _ why: String) -> Int32 {
    if lws_return_http_status(wsi, code, "stemdeck: \(why)") != 0 { return -1 }
    return 1
  }

  // MARK: - The WebSocket's checks

  private func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
    let n = Int(lws_hdr_total_length(wsi, token))
    guard n > 0, n < 2048 else { return nil }
    var buffer = [CChar](repeating: 0, count: n + 1)
    guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Why a WebSocket may not open, or nil: its path is /ws; there is room; a browser's Origin is
  /// this server as the browser reached it (no other page may drive the mixer); on loopback,
  /// the browser reached it by a loopback name (a rebound DNS name is refused); with a token,
  /// it carries the token.
  private func refusal(_ wsi: OpaquePointer) -> String? {
    guard header(wsi, WSI_TOKEN_GET_URI) == "/ws" else { return "the WebSocket is at /ws" }
    guard openSessions < Self.maxSessions else { return "\(Self.maxSessions) web mixers are connected; close one" }
    guard let host = header(wsi, WSI_TOKEN_HOST)?.lowercased() else { return "no Host header" }
    if let origin = header(wsi, WSI_TOKEN_ORIGIN), origin.lowercased() != "http://" + host {
      return "a page from another origin may not drive this mixer"
    }
    if let token = options.token {
      var buffer = [CChar](repeating: 0, count: 256)
      guard let given = lws_get_urlarg_by_name(wsi, "token=", &buffer, Int32(buffer.count)),
        WebToken.matches(String(cString: given), token)
      else { return "a wrong or missing token" }
    } else if !WebToken.isLoopbackHost(host, bound: options.host) {
      return "on a loopback address the mixer is reached as localhost, 127.0.0.1 or [::1]"
    }
    return nil
  }

  // MARK: - Messages

  /// A browser's message (or a fragment of it): a whole one becomes a request line (line breaks
  /// in it count as spaces, as JSON allows); a binary one or one over `maxMessageBytes` closes
  /// the WebSocket.
  private func receive(_ s: WebSession, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    if lws_frame_is_binary(s.wsi) != 0 { return close(s, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, "text messages only") }
    guard s.incoming.count + length <= Self.maxMessageBytes else {
      return close(s, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "a message is at most \(Self.maxMessageBytes) bytes")
    }
    if let input, length > 0 { s.incoming += UnsafeRawBufferPointer(start: input, count: length) }
    guard lws_is_final_fragment(s.wsi) != 0 && lws_remaining_packet_payload(s.wsi) == 0 else { return 0 }
    s.toControl += s.incoming.map { $0 == 10 || $0 == 13 ? 32 : $0 } + [10]
    s.incoming = []
    flushRequests(s)
    return 0
  }

  private func close(_ s: WebSession, _ status: lws_close_status, _ why: String) -> Int32 {
    var text = Array(why.utf8.prefix(120))
    lws_close_reason(s.wsi, status, &text, text.count)
    return -1
  }

  /// One message to the browser a call (libwebsockets' rule); room in its queue reads the pair on.
  private func writeMessage(_ s: WebSession) -> Int32 {
    guard let m = s.next() else {
      return s.ended ? close(s, LWS_CLOSE_STATUS_GOINGAWAY, "stemdeck closed this connection") : 0
    }
    var buffer = [UInt8](repeating: 0, count: Self.pre + m.count)
    buffer.replaceSubrange(Self.pre..., with: m)
    let written = buffer.withUnsafeMutableBufferPointer { lws_write(s.wsi, $0.baseAddress! + Self.pre, m.count, LWS_WRITE_TEXT) }
    guard written >= m.count else { return -1 }
    if s.hasOutgoing || s.ended { lws_callback_on_writable(s.wsi) } else { pump(s) }
    return 0
  }
}
