;; {{name}}: a Warden tool in WebAssembly text, a component of the warden:tool world
;; written by hand. It returns its input. `wasm-tools print` on any tool shows the same shape.
(component
  (core module $m
    (memory (export "memory") 1)
    ;; Strings, then describe's one tool-info record and its list, then call's result.
    (data (i32.const 1024) "{{name}}")
    (data (i32.const 1056) "Return the input unchanged.")
    (data (i32.const 1120) "{\"type\":\"object\"}")
    (data (i32.const 2048)
      "\00\04\00\00" "{{name_len}}"    ;; name: ptr 1024, len {{name_bytes}}
      "\20\04\00\00" "\1b\00\00\00"    ;; description: ptr 1056, len 27
      "\60\04\00\00" "\11\00\00\00")   ;; input-schema: ptr 1120, len 17
    (data (i32.const 2080) "\00\08\00\00" "\01\00\00\00") ;; list: ptr 2048, len 1
    ;; Argument strings land above 4096; nothing is ever freed (one call per instance).
    (global $heap (mut i32) (i32.const 4096))
    (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
      (local $at i32)
      (local.set $at (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
                              (i32.sub (i32.const 0) (local.get $align))))
      (global.set $heap (i32.add (local.get $at) (local.get $size)))
      (block $fits
        (br_if $fits (i32.le_u (global.get $heap) (i32.shl (memory.size) (i32.const 16))))
        (br_if $fits (i32.ne (memory.grow (i32.add (i32.shr_u (global.get $heap) (i32.const 16)) (i32.const 1))) (i32.const -1)))
        unreachable)
      (local.get $at))
    (func (export "describe") (result i32) (i32.const 2080))
    ;; result<string, tool-error> at 2096: tag 0 (ok), then the string: the input itself.
    (func (export "call") (param $name i32) (param $name_len i32) (param $input i32) (param $input_len i32) (result i32)
      (i32.store8 (i32.const 2096) (i32.const 0))
      (i32.store (i32.const 2100) (local.get $input))
      (i32.store (i32.const 2104) (local.get $input_len))
      (i32.const 2096)))
  (core instance $i (instantiate $m))
  (type $info (record (field "name" string) (field "description" string) (field "input-schema" string)))
  (export $tool-info "tool-info" (type $info))
  (type $error (variant (case "invalid-input" string) (case "denied" string) (case "failed" string)))
  (export $tool-error "tool-error" (type $error))
  (func $describe (result (list $tool-info))
    (canon lift (core func $i "describe") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func $call (param "name" string) (param "input" string) (result (result string (error $tool-error)))
    (canon lift (core func $i "call") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (export "describe" (func $describe))
  (export "call" (func $call)))
