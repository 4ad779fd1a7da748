import StemdeckRing
import Synchronization

// What the renderer does around a plugin's `run` beyond audio and control ports: its atom
// sequence ports and the LV2 worker (docs/architecture.md, *Plugin inserts*). One
// `InsertPlumbing` per plugin instance, built on the control thread (StemdeckControl's
// PluginInstance.swift connects the atom buffers, fills in the worker interface) and handed to
// the renderer inside the insert's stage. Three byte rings carry variable-size messages, each a
// 4-byte length and the bytes:
//   messages   control thread → renderer: atoms (a patch:Set) for the plugin's control input;
//   requests   renderer (the plugin's `schedule_work`, called from `run`) → the worker thread;
//   responses  the worker thread (the plugin's `respond`, called from `work`) → renderer, which
//              hands each to the plugin's `work_response` after `run`, then calls `end_run`.
// The renderer's side allocates nothing and takes no lock (`@_noLocks` below).

/// LV2 worker `respond(handle, size, data)`.
public typealias InsertRespondFunction = @convention(c) (UnsafeMutableRawPointer?, UInt32, UnsafeRawPointer?) -> UInt32
/// LV2 worker `work(instance, respond, respond handle, size, data)`.
public typealias InsertWorkFunction =
  @convention(c) (UnsafeMutableRawPointer?, InsertRespondFunction?, UnsafeMutableRawPointer?, UInt32, UnsafeRawPointer?) -> UInt32
/// LV2 worker `work_response(instance, size, data)`.
public typealias InsertWorkResponseFunction = @convention(c) (UnsafeMutableRawPointer?, UInt32, UnsafeRawPointer?) -> UInt32
/// LV2 worker `end_run(instance)`.
public typealias InsertEndRunFunction = @convention(c) (UnsafeMutableRawPointer?) -> UInt32

/// One plugin instance's atom buffers and worker rings. Lives at a fixed address (the plugin
/// keeps it as its `schedule_work` handle) from before instantiation until after the instance
/// is freed.
public struct InsertPlumbing: ~Copyable {
  /// The plugin's handle and worker interface: set on the control thread before the stage is
  /// sent (nil: the plugin has none).
  public var handle: UnsafeMutableRawPointer?
  public var work: InsertWorkFunction?
  public var workResponse: InsertWorkResponseFunction?
  public var endRun: InsertEndRunFunction?
  /// Atom sequence ports' buffers (`atomCapacity` bytes each, 8-aligned), inputs then outputs.
  public let buffers: UnsafeMutablePointer<UnsafeMutableRawPointer>
  public let inputCount: Int
  public let outputCount: Int
  public let atomCapacity: Int
  /// URIDs of atom:Sequence and atom:Chunk.
  public let sequenceType: UInt32
  public let chunkType: UInt32
  /// `work` runs at once inside `schedule_work` (an offline mixer: no audio thread to keep).
  public let synchronous: Bool
  /// The rings' ends, each in an allocation of its own that only the thread using that end
  /// touches. (Both ends in one struct reached through this plumbing's pointer from two threads
  /// is a Swift access race to ThreadSanitizer, though the fields differ: an `inout` to one end
  /// is a modifying access to the whole.) `In`: the producer, `Out`: the consumer.
  @usableFromInline let messagesIn: UnsafeMutablePointer<Producer<UInt8>>
  @usableFromInline let messagesOut: UnsafeMutablePointer<Consumer<UInt8>>
  @usableFromInline let requestsIn: UnsafeMutablePointer<Producer<UInt8>>
  @usableFromInline let requestsOut: UnsafeMutablePointer<Consumer<UInt8>>
  @usableFromInline let responsesIn: UnsafeMutablePointer<Producer<UInt8>>
  @usableFromInline let responsesOut: UnsafeMutablePointer<Consumer<UInt8>>
  /// Room for one response or request, contiguous (a ring's bytes may wrap): the renderer's
  /// and the worker thread's, each its own.
  @usableFromInline let renderScratch: UnsafeMutableRawPointer
  @usableFromInline let workerScratch: UnsafeMutableRawPointer
  /// Responses handed to `work_response` (written: renderer; read: control thread, tests).
  public let responsesDelivered = Atomic<Int>(0)
  /// Requests `work` has run (written: the worker thread, or the renderer when synchronous).
  public let requestsWorked = Atomic<Int>(0)

  /// The size of every message ring, and so the largest message (less its 4-byte length).
  public static let ringBytes = 16_384

  /// Builds the plumbing of an instance with `inputs` and `outputs` atom ports (control thread).
  public static func make(
    inputs: Int, outputs: Int, atomCapacity: Int, sequenceType: UInt32, chunkType: UInt32, synchronous: Bool
  ) -> UnsafeMutablePointer<InsertPlumbing> {
    let buffers = UnsafeMutablePointer<UnsafeMutableRawPointer>.allocate(capacity: Swift.max(1, inputs + outputs))
    for i in 0..<(inputs + outputs) {
      let b = UnsafeMutableRawPointer.allocate(byteCount: atomCapacity, alignment: 16)
      b.initializeMemory(as: UInt8.self, repeating: 0, count: atomCapacity)
      buffers[i] = b
    }
    let p = UnsafeMutablePointer<InsertPlumbing>.allocate(capacity: 1)
    p.initialize(
      to: InsertPlumbing(
        buffers: buffers, inputCount: inputs, outputCount: outputs, atomCapacity: atomCapacity, sequenceType: sequenceType,
        chunkType: chunkType, synchronous: synchronous))
    for i in 0..<inputs { p.pointee.resetInput(i) }
    for i in 0..<outputs { p.pointee.resetOutput(i) }
    return p
  }

  init(
    buffers: UnsafeMutablePointer<UnsafeMutableRawPointer>, inputCount: Int, outputCount: Int, atomCapacity: Int,
    sequenceType: UInt32, chunkType: UInt32, synchronous: Bool
  ) {
    self.buffers = buffers
    self.inputCount = inputCount
    self.outputCount = outputCount
    self.atomCapacity = atomCapacity
    self.sequenceType = sequenceType
    self.chunkType = chunkType
    self.synchronous = synchronous
    let messages: RingEnds<UInt8> = SPSCRing.make(minimumCapacity: Self.ringBytes)
    messagesIn = Self.box(messages.producer)
    messagesOut = Self.box(messages.consumer)
    let requests: RingEnds<UInt8> = SPSCRing.make(minimumCapacity: Self.ringBytes)
    requestsIn = Self.box(requests.producer)
    requestsOut = Self.box(requests.consumer)
    let responses: RingEnds<UInt8> = SPSCRing.make(minimumCapacity: Self.ringBytes)
    responsesIn = Self.box(responses.producer)
    responsesOut = Self.box(responses.consumer)
    renderScratch = .allocate(byteCount: Self.ringBytes, alignment: 16)
    workerScratch = .allocate(byteCount: Self.ringBytes, alignment: 16)
  }

  /// `value` in an allocation of its own.
  static func box<T: ~Copyable>(_ value: consuming T) -> UnsafeMutablePointer<T> {
    let p = UnsafeMutablePointer<T>.allocate(capacity: 1)
    p.initialize(to: value)
    return p
  }

  /// Frees the plumbing (control thread, once the instance is freed and no chain holds it).
  public static func free(_ p: UnsafeMutablePointer<InsertPlumbing>) {
    for end in [p.pointee.messagesIn, p.pointee.requestsIn, p.pointee.responsesIn] {
      end.deinitialize(count: 1)
      end.deallocate()
    }
    for end in [p.pointee.messagesOut, p.pointee.requestsOut, p.pointee.responsesOut] {
      end.deinitialize(count: 1)
      end.deallocate()
    }
    for i in 0..<(p.pointee.inputCount + p.pointee.outputCount) { p.pointee.buffers[i].deallocate() }
    p.pointee.buffers.deallocate()
    p.pointee.renderScratch.deallocate()
    p.pointee.workerScratch.deallocate()
    p.deinitialize(count: 1)
    p.deallocate()
  }

  /// Atom input `i`'s buffer (an `LV2_Atom_Sequence`).
  public func input(_ i: Int) -> UnsafeMutableRawPointer { buffers[i] }
  /// Atom output `i`'s buffer.
  public func output(_ i: Int) -> UnsafeMutableRawPointer { buffers[inputCount &+ i] }

  /// An empty sequence: `LV2_Atom { size: 8, type: Sequence }`, body `{ unit: 0, pad: 0 }`.
  @_noLocks @inline(__always)
  func resetInput(_ i: Int) {
    let b = buffers[i]
    b.storeBytes(of: UInt32(8), as: UInt32.self)
    b.storeBytes(of: sequenceType, toByteOffset: 4, as: UInt32.self)
    b.storeBytes(of: UInt64(0), toByteOffset: 8, as: UInt64.self)
  }

  /// An output the plugin may fill: the LV2 atom spec has the host set its size to the room
  /// there is for the body, and its type to atom:Chunk, before each `run`.
  @_noLocks @inline(__always)
  func resetOutput(_ i: Int) {
    let b = buffers[inputCount &+ i]
    b.storeBytes(of: UInt32(truncatingIfNeeded: atomCapacity &- 8), as: UInt32.self)
    b.storeBytes(of: chunkType, toByteOffset: 4, as: UInt32.self)
  }

  // MARK: - The control thread's side

  /// Queues `atom` (an `LV2_Atom` and its body, `size` bytes) for the plugin's first atom input,
  /// at frame 0 of the next block. False: no room (the ring or the port), nothing queued.
  public func send(atom: UnsafeRawBufferPointer) -> Bool {
    guard inputCount > 0, atom.count + 16 <= atomCapacity - 16 else { return false }
    return Self.push(atom, into: &messagesIn.pointee)
  }

  /// The worker thread: runs `work` on every request waiting in `p`'s ring; returns how many.
  public static func workRequests(_ p: UnsafeMutablePointer<InsertPlumbing>) -> Int {
    guard let work = p.pointee.work else { return 0 }
    var done = 0
    let requests = p.pointee.requestsOut
    while let size = pop(from: &requests.pointee, into: p.pointee.workerScratch) {
      _ = work(p.pointee.handle, insertRespond, UnsafeMutableRawPointer(p), UInt32(size), p.pointee.workerScratch)
      p.pointee.requestsWorked.add(1, ordering: .releasing)
      done += 1
    }
    return done
  }

  // MARK: - The renderer's side

  /// Before `run`: every atom input emptied (the first given the messages queued, while they
  /// fit), every output's room set.
  @_noLocks
  public func prepare() {
    for i in 0..<inputCount { resetInput(i) }
    for i in 0..<outputCount { resetOutput(i) }
    guard inputCount > 0 else { return }
    let seq = buffers[0]
    var used = 16  // the LV2_Atom header and the sequence body's unit and pad
    while let length = Self.peekLength(&messagesOut.pointee) {
      let event = 8 &+ ((length &+ 7) & ~7)  // frames (8), then the atom (header and body) padded to 8
      guard used &+ event <= atomCapacity else { break }
      let at = seq + used
      at.storeBytes(of: Int64(0), as: Int64.self)
      _ = Self.pop(from: &messagesOut.pointee, into: at + 8)
      used &+= event
    }
    seq.storeBytes(of: UInt32(truncatingIfNeeded: used &- 8), as: UInt32.self)
  }

  /// After `run`: every response waiting goes to `work_response`, then `end_run`.
  @_noLocks
  public func finish() {
    if let workResponse {
      while let size = Self.pop(from: &responsesOut.pointee, into: renderScratch) {
        RealtimeC.workResponse(workResponse, handle, size: size, data: renderScratch)
        responsesDelivered.add(1, ordering: .releasing)
      }
    }
    if let endRun { RealtimeC.endRun(endRun, handle) }
  }

  // MARK: - Byte rings of length-prefixed messages

  /// Writes `bytes` with its length in one commit, or nothing when there is no room.
  @_noLocks @inlinable
  static func push(_ bytes: UnsafeRawBufferPointer, into ring: inout Producer<UInt8>) -> Bool {
    let total = 4 &+ bytes.count
    guard bytes.count <= ringBytes &- 4, ring.freeCount() >= total else { return false }
    let seg = ring.writableSegments()
    var length = UInt32(truncatingIfNeeded: bytes.count)
    withUnsafeBytes(of: &length) { header in
      for k in 0..<total {
        let byte = k < 4 ? header[k] : bytes[k &- 4]
        if k < seg.first.count { seg.first[k] = byte } else { seg.second[k &- seg.first.count] = byte }
      }
    }
    ring.commit(count: total)
    return true
  }

  /// The length of the next whole message, or nil (none, or not all of it written yet).
  @_noLocks @inlinable
  static func peekLength(_ ring: inout Consumer<UInt8>) -> Int? {
    guard ring.availableCount() >= 4 else { return nil }
    let seg = ring.readableSegments()
    var length: UInt32 = 0
    for k in 0..<4 {
      let byte = k < seg.first.count ? seg.first[k] : seg.second[k &- seg.first.count]
      length |= UInt32(byte) << (8 &* UInt32(k))
    }
    return seg.count >= 4 &+ Int(length) ? Int(length) : nil
  }

  /// Copies the next message's bytes to `destination` (room for `ringBytes`) and releases it;
  /// returns its length, or nil when there is none.
  @_noLocks @inlinable
  static func pop(from ring: inout Consumer<UInt8>, into destination: UnsafeMutableRawPointer) -> Int? {
    guard let length = peekLength(&ring) else { return nil }
    let seg = ring.readableSegments()
    for k in 0..<length {
      let j = k &+ 4
      destination.storeBytes(
        of: j < seg.first.count ? seg.first[j] : seg.second[j &- seg.first.count], toByteOffset: k, as: UInt8.self)
    }
    ring.release(count: 4 &+ length)
    return length
  }
}

/// The `schedule_work` stemdeck gives a plugin (its handle: the instance's `InsertPlumbing`).
/// Called from the plugin's `run`, on the audio thread: copies the request into the worker's
/// ring (LV2_WORKER_ERR_NO_SPACE, 2, when it is full). An offline mixer's plumbing runs `work`
/// at once instead (`synchronous`), as the worker spec allows a host that is not realtime.
@_noLocks
public func insertScheduleWork(_ handle: UnsafeMutableRawPointer?, _ size: UInt32, _ data: UnsafeRawPointer?) -> UInt32 {
  guard let handle, let data, size > 0 else { return 1 }
  let p = handle.assumingMemoryBound(to: InsertPlumbing.self)
  let bytes = UnsafeRawBufferPointer(start: data, count: Int(size))
  if p.pointee.synchronous, let work = p.pointee.work {
    let status = RealtimeC.work(work, p.pointee.handle, respondHandle: handle, size: size, data: data)
    p.pointee.requestsWorked.add(1, ordering: .releasing)
    return status
  }
  let requests = p.pointee.requestsIn
  return InsertPlumbing.push(bytes, into: &requests.pointee) ? 0 : 2
}

/// The `respond` stemdeck passes to a plugin's `work` (its handle: the instance's plumbing):
/// queues the response for the renderer, which delivers it after the next `run`.
@_noLocks
public func insertRespond(_ handle: UnsafeMutableRawPointer?, _ size: UInt32, _ data: UnsafeRawPointer?) -> UInt32 {
  guard let handle else { return 1 }
  let p = handle.assumingMemoryBound(to: InsertPlumbing.self)
  let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : Int(size))
  let responses = p.pointee.responsesIn
  return InsertPlumbing.push(bytes, into: &responses.pointee) ? 0 : 2
}
