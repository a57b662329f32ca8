;; The census pass of src/guardrails/census.ts, in WebAssembly: V8 compiles a byte loop over a typed array with a
;; bounds check, an interrupt check and an overflow check per access and turn (about 13 instructions a byte for the
;; pairs alone, 25 with the run of digits); here memory accesses need no bounds check and a pair is one 16-bit load.
;; scripts/build-census-wasm.mjs assembles it (wabt) into census-wasm.ts; test/unit/guardrails/census.test.ts
;; checks the two agree.
;;
;; Memory (3 pages, exported): [0, 65536) the pairs, a byte each, pair (a, b) at a | b << 8 holding the stamp of the
;; census that saw it; [65536, 68096) the run table, filled by census.ts: next state = table[state << 8 | byte],
;; the state being the digits in the current run of number characters, 0 to 8, and 9 once nine were seen (it then
;; stays 9); [69632, 69632 + 65536 + 4) the text's UTF-8.
(module
  (memory (export "memory") 3)
  ;; Stamps the pairs of the text's `length` bytes and answers 1 when nine digits occur in one run, else 0. Four
  ;; zero bytes past the text make the last turn whole: pairs with NUL, which no literal holds, and the end of a run.
  (func (export "count") (param $length i32) (param $stamp i32) (result i32)
    (local $at i32) (local $pair i32) (local $state i32)
    (i32.store offset=69632 (local.get $length) (i32.const 0))
    (block $done
      (br_if $done (i32.eqz (local.get $length)))
      (loop $turn
        ;; byte 0: its pair with the byte after it (the two as one little-endian u16: no masking), then the run
        (local.set $pair (i32.load16_u offset=69632 (i32.add (local.get $at) (i32.const 0))))
        (i32.store8 (local.get $pair) (local.get $stamp))
        (local.set $state (i32.load8_u offset=65536 (i32.or (i32.shl (local.get $state) (i32.const 8)) (i32.and (local.get $pair) (i32.const 255)))))
        ;; byte 1: its pair with the byte after it (the two as one little-endian u16: no masking), then the run
        (local.set $pair (i32.load16_u offset=69632 (i32.add (local.get $at) (i32.const 1))))
        (i32.store8 (local.get $pair) (local.get $stamp))
        (local.set $state (i32.load8_u offset=65536 (i32.or (i32.shl (local.get $state) (i32.const 8)) (i32.and (local.get $pair) (i32.const 255)))))
        ;; byte 2: its pair with the byte after it (the two as one little-endian u16: no masking), then the run
        (local.set $pair (i32.load16_u offset=69632 (i32.add (local.get $at) (i32.const 2))))
        (i32.store8 (local.get $pair) (local.get $stamp))
        (local.set $state (i32.load8_u offset=65536 (i32.or (i32.shl (local.get $state) (i32.const 8)) (i32.and (local.get $pair) (i32.const 255)))))
        ;; byte 3: its pair with the byte after it (the two as one little-endian u16: no masking), then the run
        (local.set $pair (i32.load16_u offset=69632 (i32.add (local.get $at) (i32.const 3))))
        (i32.store8 (local.get $pair) (local.get $stamp))
        (local.set $state (i32.load8_u offset=65536 (i32.or (i32.shl (local.get $state) (i32.const 8)) (i32.and (local.get $pair) (i32.const 255)))))
        (local.set $at (i32.add (local.get $at) (i32.const 4)))
        (br_if $turn (i32.lt_u (local.get $at) (local.get $length)))))
    (i32.eq (local.get $state) (i32.const 9)))
)
