import Synchronization

/// A wait-free single-producer / single-consumer ring buffer of trivial elements, split into a
/// `Producer` and a `Consumer` handle (the shape of rtrb and JACK's ringbuffer).
///
/// - Realtime: every operation on either handle is wait-free: a bounded number of atomic loads
///   and stores, no allocation, no lock, no syscall. Only `make` and the handles' `deinit`
///   allocate or free, so create and destroy rings on a non-realtime thread.
/// - Thread: each handle is `~Copyable` and `Sendable`: it can be moved to another thread, but it
///   is never shared, so there is exactly one producer and one consumer.
/// - Indices: `head` (read counter) and `tail` (write counter) grow monotonically with `&+`;
///   capacity is a power of two and the slot is `counter & mask`. All slots are usable:
///   full means `tail &- head == capacity`. Each handle caches the other side's counter and
///   reloads it (acquiring) only when the ring looks full or empty; it publishes its own
///   counter with a releasing store. No fences.
/// - Lifetime: the shared storage is freed when both handles are gone (an atomic count of 2).
public enum SPSCRing {
  /// Makes a ring holding at least `minimumCapacity` elements (rounded up to a power of two).
  public static func make<Element: BitwiseCopyable>(
    minimumCapacity: Int, of: Element.Type = Element.self
  ) -> RingEnds<Element> {
    precondition(minimumCapacity >= 1, "ring capacity must be at least 1")
    var capacity = 1
    while capacity < minimumCapacity { capacity <<= 1 }
    let shared = RingStorage<Element>.allocate(capacity: capacity)
    return RingEnds(producer: Producer(shared), consumer: Consumer(shared))
  }
}

/// The two handles of a new ring; take each out with `consume ends.producer` / `ends.consumer`.
@frozen
public struct RingEnds<Element: BitwiseCopyable>: ~Copyable {
  public var producer: Producer<Element>
  public var consumer: Consumer<Element>
}

/// The shared part of a ring: a raw header (head at byte 0, tail at byte 128, handle count at
/// byte 256, each on its own cache line) and the element buffer.
@usableFromInline
struct RingStorage<Element: BitwiseCopyable>: @unchecked Sendable {
  @usableFromInline let header: UnsafeMutableRawPointer
  @usableFromInline let buffer: UnsafeMutablePointer<Element>
  @usableFromInline let capacity: Int

  @usableFromInline static var headerSize: Int { 384 }

  init(header: UnsafeMutableRawPointer, buffer: UnsafeMutablePointer<Element>, capacity: Int) {
    self.header = header
    self.buffer = buffer
    self.capacity = capacity
  }

  static func allocate(capacity: Int) -> RingStorage {
    let header = UnsafeMutableRawPointer.allocate(byteCount: headerSize, alignment: 128)
    (header + 0).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
    (header + 128).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
    (header + 256).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(2))
    let buffer = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
    return RingStorage(header: header, buffer: buffer, capacity: capacity)
  }

  @inlinable @inline(__always)
  var head: UnsafeMutablePointer<Atomic<Int>> {
    (header + 0).assumingMemoryBound(to: Atomic<Int>.self)
  }
  @inlinable @inline(__always)
  var tail: UnsafeMutablePointer<Atomic<Int>> {
    (header + 128).assumingMemoryBound(to: Atomic<Int>.self)
  }
  @usableFromInline
  var handles: UnsafeMutablePointer<Atomic<Int>> {
    (header + 256).assumingMemoryBound(to: Atomic<Int>.self)
  }
  @inlinable @inline(__always) var mask: Int { capacity &- 1 }

  /// Called from each handle's deinit; the last one frees the storage.
  @usableFromInline
  func releaseHandle() {
    if handles.pointee.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
      buffer.deallocate()
      header.deallocate()
    }
  }

  /// True when the other handle is gone.
  @usableFromInline
  var isAbandoned: Bool { handles.pointee.load(ordering: .acquiring) < 2 }
}

/// Two contiguous regions of a ring (the second may be empty), in order.
public struct RingSegments<Element: BitwiseCopyable> {
  public var first: UnsafeMutableBufferPointer<Element>
  public var second: UnsafeMutableBufferPointer<Element>
  @inlinable public var count: Int { first.count &+ second.count }
  @inlinable
  public init(first: UnsafeMutableBufferPointer<Element>, second: UnsafeMutableBufferPointer<Element>) {
    self.first = first
    self.second = second
  }
}

/// The writing end of an `SPSCRing`. Move-only; one thread at a time.
public struct Producer<Element: BitwiseCopyable>: ~Copyable, @unchecked Sendable {
  @usableFromInline let storage: RingStorage<Element>
  /// Our own write counter (the published `tail` always equals it between calls).
  @usableFromInline var tail: Int = 0
  /// Last `head` we loaded from the consumer.
  @usableFromInline var cachedHead: Int = 0

  init(_ storage: RingStorage<Element>) { self.storage = storage }

  deinit { storage.releaseHandle() }

  /// The ring's capacity in elements.
  @inlinable public var capacity: Int { storage.capacity }

  /// The total number of elements ever written (a monotonically increasing counter).
  @inlinable public var writeCounter: Int { tail }

  /// True when the consumer handle has been destroyed.
  public var isAbandoned: Bool { storage.isAbandoned }

  /// Elements that can be written now. Reloads the consumer's counter.
  @inlinable
  public mutating func freeCount() -> Int {
    cachedHead = storage.head.pointee.load(ordering: .acquiring)
    return storage.capacity &- (tail &- cachedHead)
  }

  /// Appends one element; false when the ring is full.
  @inlinable
  public mutating func push(_ element: Element) -> Bool {
    if tail &- cachedHead == storage.capacity {
      cachedHead = storage.head.pointee.load(ordering: .acquiring)
      if tail &- cachedHead == storage.capacity { return false }
    }
    storage.buffer[tail & storage.mask] = element
    tail &+= 1
    storage.tail.pointee.store(tail, ordering: .releasing)
    return true
  }

  /// The free space as up to two contiguous regions. Write into them, then `commit(count:)`.
  @inlinable
  public mutating func writableSegments() -> RingSegments<Element> {
    let free = freeCount()
    let start = tail & storage.mask
    let firstCount = Swift.min(free, storage.capacity &- start)
    return RingSegments(
      first: UnsafeMutableBufferPointer(start: storage.buffer + start, count: firstCount),
      second: UnsafeMutableBufferPointer(start: storage.buffer, count: free &- firstCount))
  }

  /// Publishes `count` elements written into the segments from `writableSegments()`.
  @inlinable
  public mutating func commit(count: Int) {
    tail &+= count
    storage.tail.pointee.store(tail, ordering: .releasing)
  }

  /// Copies as many elements as fit; returns how many were written.
  @inlinable
  public mutating func write(from source: UnsafeBufferPointer<Element>) -> Int {
    let segments = writableSegments()
    let n = Swift.min(source.count, segments.count)
    guard n > 0, let base = source.baseAddress else { return 0 }
    let a = Swift.min(n, segments.first.count)
    if a > 0 { copyElements(to: segments.first.baseAddress!, from: base, count: a) }
    if n > a { copyElements(to: segments.second.baseAddress!, from: base + a, count: n &- a) }
    commit(count: n)
    return n
  }
}

/// The reading end of an `SPSCRing`. Move-only; one thread at a time.
public struct Consumer<Element: BitwiseCopyable>: ~Copyable, @unchecked Sendable {
  @usableFromInline let storage: RingStorage<Element>
  /// Our own read counter.
  @usableFromInline var head: Int = 0
  /// Last `tail` we loaded from the producer.
  @usableFromInline var cachedTail: Int = 0

  init(_ storage: RingStorage<Element>) { self.storage = storage }

  deinit { storage.releaseHandle() }

  @inlinable public var capacity: Int { storage.capacity }

  /// The total number of elements ever read (a monotonically increasing counter).
  @inlinable public var readCounter: Int { head }

  public var isAbandoned: Bool { storage.isAbandoned }

  /// Elements that can be read now. Reloads the producer's counter.
  @inlinable
  public mutating func availableCount() -> Int {
    cachedTail = storage.tail.pointee.load(ordering: .acquiring)
    return cachedTail &- head
  }

  /// Removes and returns the oldest element, or nil when the ring is empty.
  @inlinable
  public mutating func pop() -> Element? {
    if cachedTail == head {
      cachedTail = storage.tail.pointee.load(ordering: .acquiring)
      if cachedTail == head { return nil }
    }
    let element = storage.buffer[head & storage.mask]
    head &+= 1
    storage.head.pointee.store(head, ordering: .releasing)
    return element
  }

  /// The readable elements as up to two contiguous regions. Read them, then `release(count:)`.
  @inlinable
  public mutating func readableSegments() -> RingSegments<Element> {
    let available = availableCount()
    let start = head & storage.mask
    let firstCount = Swift.min(available, storage.capacity &- start)
    return RingSegments(
      first: UnsafeMutableBufferPointer(start: storage.buffer + start, count: firstCount),
      second: UnsafeMutableBufferPointer(start: storage.buffer, count: available &- firstCount))
  }

  /// Frees `count` elements read from the segments of `readableSegments()`.
  @inlinable
  public mutating func release(count: Int) {
    head &+= count
    storage.head.pointee.store(head, ordering: .releasing)
  }

  /// Copies up to `destination.count` elements out; returns how many were read.
  @inlinable
  public mutating func read(into destination: UnsafeMutableBufferPointer<Element>) -> Int {
    let segments = readableSegments()
    let n = Swift.min(destination.count, segments.count)
    guard n > 0, let base = destination.baseAddress else { return 0 }
    let a = Swift.min(n, segments.first.count)
    if a > 0 { copyElements(to: base, from: segments.first.baseAddress!, count: a) }
    if n > a { copyElements(to: base + a, from: segments.second.baseAddress!, count: n &- a) }
    release(count: n)
    return n
  }

  /// Discards readable elements until the read counter reaches `counter` (or the ring is
  /// empty); returns true when it got there. Used to skip a stream up to a seek boundary.
  @inlinable
  public mutating func discard(upTo counter: Int) -> Bool {
    let wanted = counter &- head
    if wanted <= 0 { return true }
    let n = Swift.min(wanted, availableCount())
    release(count: n)
    return n == wanted
  }
}

/// Copies trivial elements as bytes (the elements are `BitwiseCopyable`, so nothing is retained
/// or released; the typed `update(from:count:)` is not provably free of deallocation).
@inlinable @inline(__always)
func copyElements<Element: BitwiseCopyable>(
  to destination: UnsafeMutablePointer<Element>, from source: UnsafePointer<Element>, count: Int
) {
  UnsafeMutableRawPointer(destination).copyMemory(
    from: UnsafeRawPointer(source), byteCount: count &* MemoryLayout<Element>.stride)
}
