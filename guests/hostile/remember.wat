;; Hostile: a preview1 command that looks for what an earlier run of it left
;; in its memory (a pooled slot used again), in its first page and in two
;; pages it grew (near 1 MiB and 2 MiB in), then leaves its mark in all three.
;; Exits with an error if it found one.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func $seen (param $at i32) (result i32)
    (i32.eq (i32.load (local.get $at)) (i32.const 0x5741524e)))
  (func (export "_start")
    (local $found i32)
    (drop (memory.grow (i32.const 31)))
    (local.set $found
      (i32.or (call $seen (i32.const 1024))
        (i32.or (call $seen (i32.const 0xf0000)) (call $seen (i32.const 0x1f0000)))))
    (i32.store (i32.const 1024) (i32.const 0x5741524e))
    (i32.store (i32.const 0xf0000) (i32.const 0x5741524e))
    (i32.store (i32.const 0x1f0000) (i32.const 0x5741524e))
    (if (local.get $found) (then (call $exit (i32.const 3))))))
