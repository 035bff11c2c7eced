;; hello: a preview1 command written by hand. It greets the name given as its
;; first argument (or "world") and exits 0.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; Layout: 0 "hello, "  16 "world"  24 "!\n"  32 iovec  64 bytes written
  ;;         80 argc  84 argv buffer size  96 argv pointers  1024 argv bytes  8192 the message
  (data (i32.const 0) "hello, ")
  (data (i32.const 16) "world")
  (data (i32.const 24) "!\n")

  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))

  (func (export "_start")
    (local $name i32) (local $len i32) (local $written i32)
    (local.set $name (i32.const 16))
    (local.set $len (i32.const 5))
    (drop (call $args_sizes_get (i32.const 80) (i32.const 84)))
    (if (i32.and (i32.and (i32.ge_u (i32.load (i32.const 80)) (i32.const 2))
                          (i32.le_u (i32.load (i32.const 80)) (i32.const 200)))
                 (i32.le_u (i32.load (i32.const 84)) (i32.const 4096)))
      (then
        (drop (call $args_get (i32.const 96) (i32.const 1024)))
        (local.set $name (i32.load (i32.const 100)))
        (local.set $len (call $strlen (local.get $name)))))
    ;; "hello, " + name + "!\n", contiguous at 8192
    (memory.copy (i32.const 8192) (i32.const 0) (i32.const 7))
    (memory.copy (i32.const 8199) (local.get $name) (local.get $len))
    (memory.copy (i32.add (i32.const 8199) (local.get $len)) (i32.const 24) (i32.const 2))
    (i32.store (i32.const 32) (i32.const 8192))
    (i32.store (i32.const 36) (i32.add (local.get $len) (i32.const 9)))
    ;; fd_write may write less than asked: continue until all is out.
    (block $out
      (loop $more
        (br_if $out (call $fd_write (i32.const 1) (i32.const 32) (i32.const 1) (i32.const 64)))
        (local.set $written (i32.load (i32.const 64)))
        (br_if $out (i32.eqz (local.get $written)))
        (i32.store (i32.const 32) (i32.add (i32.load (i32.const 32)) (local.get $written)))
        (i32.store (i32.const 36) (i32.sub (i32.load (i32.const 36)) (local.get $written)))
        (br_if $more (i32.gt_u (i32.load (i32.const 36)) (i32.const 0)))))))
