import CJack
import Foundation
import StemdeckEngine
import StemdeckSession
import Synchronization

// JACK transport: stemdeck can follow it (other apps start, stop and locate stemdeck) or lead
// it (stemdeck starts, stops and locates JACK transport, and is timebase master: other apps read
// bar/beat/tick from the session's tempo).

/// The session tempo as the timebase callback reads it (written by the control thread).
struct TimebaseTempo: ~Copyable {
  let bpmBits = Atomic<UInt64>(0)
  let beatsPerBar = Atomic<Int>(4)
}

/// The timebase callback: fills bar/beat/tick for the frame JACK asks about.
///
/// - Realtime: safe (JACK calls it from the process thread): arithmetic on atomics only.
@_noLocks
func stemdeckTimebase(
  _ state: jack_transport_state_t, _ nframes: jack_nframes_t, _ position: UnsafeMutablePointer<jack_position_t>?,
  _ newPosition: Int32, _ arg: UnsafeMutableRawPointer?
) {
  guard let position, let arg else { return }
  let context = arg.assumingMemoryBound(to: ProcessContext.self)
  let bpm = Double(bitPattern: context.pointee.tempo.bpmBits.load(ordering: .relaxed))
  let perBar = context.pointee.tempo.beatsPerBar.load(ordering: .relaxed)
  let rate = Double(position.pointee.frame_rate)
  guard bpm > 0, perBar > 0, rate > 0 else { return }
  let ticksPerBeat = 1920.0
  let beats = Double(position.pointee.frame) / rate * bpm / 60
  let wholeBeats = Int(beats)
  let barIndex = wholeBeats / perBar
  position.pointee.valid = jack_position_bits_t(rawValue: position.pointee.valid.rawValue | JackPositionBBT.rawValue)
  position.pointee.bar = Int32(barIndex &+ 1)
  position.pointee.beat = Int32(wholeBeats % perBar &+ 1)
  position.pointee.tick = Int32((beats - Double(wholeBeats)) * ticksPerBeat)
  position.pointee.bar_start_tick = Double(barIndex) * Double(perBar) * ticksPerBeat
  position.pointee.beats_per_bar = Float(perBar)
  position.pointee.beat_type = 4
  position.pointee.ticks_per_beat = ticksPerBeat
  position.pointee.beats_per_minute = bpm
}

extension JackDriver {
  /// Keeps stemdeck's transport and JACK's in step, as the session's `transportSync` says.
  /// Called from `poll()` (control thread).
  func syncTransport() -> [DriverEvent] {
    guard let client, let context, let host else { return [] }
    let transport = host.transport
    let mode = transport.sync
    if mode != syncMode {
      syncMode = mode
      context.pointee.leading.store(mode == .lead, ordering: .relaxed)
      if mode == .lead {
        _ = client.request { jack_set_timebase_callback($0, 0, stemdeckTimebase, UnsafeMutableRawPointer(context)) }
      } else {
        _ = client.request { jack_release_timebase($0) }
      }
    }
    if let tempo = transport.tempo {
      context.pointee.tempo.bpmBits.store(tempo.bpm.bitPattern, ordering: .relaxed)
      context.pointee.tempo.beatsPerBar.store(tempo.beatsPerBar, ordering: .relaxed)
    } else {
      context.pointee.tempo.bpmBits.store(0, ordering: .relaxed)
    }
    guard mode != .off else { return [] }
    var pos = jack_position_t()
    let jackState = jack_transport_query(client.handle, &pos)
    let jackRolling = jackState == JackTransportRolling || jackState == JackTransportStarting
    let jackSeconds = Double(pos.frame) / Double(max(1, pos.frame_rate))
    let ourSeconds = transport.seconds
    let playing = transport.playing
    var lines: [DriverEvent] = []
    switch mode {
    case .follow:
      if abs(jackSeconds - ourSeconds) > 0.05 && (jackRolling || abs(jackSeconds - lastJackSeconds) > 0.001) {
        host.follow(.seek(seconds: jackSeconds))
      }
      if jackRolling && !playing { host.follow(.play); lines.append(.transportFollowed(playing: true)) }
      if !jackRolling && playing { host.follow(.pause); lines.append(.transportFollowed(playing: false)) }
    case .lead:
      if playing && !jackRolling {
        jack_transport_locate(client.handle, jack_nframes_t(max(0, ourSeconds) * Double(client.sampleRate)))
        jack_transport_start(client.handle)
      } else if !playing && jackRolling {
        jack_transport_stop(client.handle)
      } else if abs(jackSeconds - ourSeconds) > 0.1 {
        jack_transport_locate(client.handle, jack_nframes_t(max(0, ourSeconds) * Double(client.sampleRate)))
      }
    case .off:
      break
    }
    lastJackSeconds = jackSeconds
    return lines
  }
}
