;; Hostile: traps at once (an `unreachable`), as a crashing tool would.
(module
  (memory (export "memory") 1)
  (func (export "_start") unreachable))
