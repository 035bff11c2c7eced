;; Hostile: grows its memory 1 MiB at a time for as long as the host lets it,
;; then touches the last page; it exits only if growth is refused politely.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (block $refused
      (loop $grow
        (br_if $refused (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
        (i32.store (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 4)) (i32.const 1))
        (br $grow)))))
