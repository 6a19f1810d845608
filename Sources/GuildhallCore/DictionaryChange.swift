// Changing a dictionary's value in place without the subscript's modify
// accessor. `d[key]?.change()` and `d[key, default: v].change()` run that
// accessor as a coroutine whose frame (the dictionary, the bucket, an
// optional copy of the value) is too large for the caller's buffer, so every
// such call mallocs and frees it and moves the value out and back
// (`objdump` of a release build: a `malloc` call in each specialization).
// On the send path one channel's `advance` cost 6% of the guild home's loop
// (docs/performance.md). Going through an index changes the value where it
// lies. Pure.

extension Dictionary {
    /// Changes the value at `key` in place, if there is one; whether there was.
    @inlinable @inline(__always) @discardableResult
    public mutating func change(_ key: Key, _ body: (inout Value) -> Void) -> Bool {
        guard let i = index(forKey: key) else { return false }
        body(&values[i])
        return true
    }

    /// Changes the value at `key` in place, or `make()`'s, which it then keeps; `body`'s result.
    @inlinable @inline(__always)
    public mutating func change<R>(_ key: Key, default make: @autoclosure () -> Value, _ body: (inout Value) -> R) -> R {
        if let i = index(forKey: key) { return body(&values[i]) }
        var value = make()
        let result = body(&value)
        self[key] = value
        return result
    }
}
