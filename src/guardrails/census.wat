;; The census pass of src/guardrails/census.ts, in WebAssembly: V8 compiles a byte loop over a typed array with a
;; bounds check, an interrupt check and an overflow check per access and turn (about 13 instructions a byte for the
;; pairs alone, 25 with the run of digits); here memory accesses need no bounds check and the turn reads a word.
;; scripts/build-census-wasm.mjs assembles it (wabt) into census-wasm.ts; test/unit/guardrails/census.test.ts
;; checks the two agree.
;;
;; Memory (2 pages, exported): [0, 16384) the pairs, a byte each, pair (a, b) at (a << 7) | b holding the stamp of
;; the census that saw it; [16384, 18944) the run table, filled by census.ts: next state = table[state << 8 | byte],
;; the state being the digits in the current run of number characters, 0 to 8, and 9 once nine were seen (it then
;; stays 9); [20480, 20480 + 65536 + 3) the text's UTF-8.
(module
  (memory (export "memory") 2)
  ;; Stamps the pairs of the text's `length` bytes and answers 1 when nine digits occur in one run, else 0. Up to three
  ;; zero bytes past the text make its last turn whole: pairs with NUL, which no literal holds, and the end of a run.
  (func (export "count") (param $length i32) (param $stamp i32) (result i32)
    (local $at i32) (local $end i32) (local $word i32) (local $byte i32) (local $low i32) (local $previous i32) (local $state i32)
    (local.set $at (i32.const 20480))
    (local.set $end (i32.add (i32.const 20480) (local.get $length)))
    (i32.store8 offset=0 (local.get $end) (i32.const 0))
    (i32.store8 offset=1 (local.get $end) (i32.const 0))
    (i32.store8 offset=2 (local.get $end) (i32.const 0))
    (block $done
      (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
      (loop $turn
        (local.set $word (i32.load (local.get $at)))
        ;; byte 0: its pair with the byte before, then the run of digits
        (local.set $byte (i32.and (local.get $word) (i32.const 255)))
        (local.set $low (i32.and (local.get $byte) (i32.const 127)))
        (i32.store8 (i32.or (local.get $previous) (local.get $low)) (local.get $stamp))
        (local.set $previous (i32.shl (local.get $low) (i32.const 7)))
        (local.set $state (i32.load8_u offset=16384 (i32.or (i32.shl (local.get $state) (i32.const 8)) (local.get $byte))))
        ;; byte 1: its pair with the byte before, then the run of digits
        (local.set $byte (i32.and (i32.shr_u (local.get $word) (i32.const 8)) (i32.const 255)))
        (local.set $low (i32.and (local.get $byte) (i32.const 127)))
        (i32.store8 (i32.or (local.get $previous) (local.get $low)) (local.get $stamp))
        (local.set $previous (i32.shl (local.get $low) (i32.const 7)))
        (local.set $state (i32.load8_u offset=16384 (i32.or (i32.shl (local.get $state) (i32.const 8)) (local.get $byte))))
        ;; byte 2: its pair with the byte before, then the run of digits
        (local.set $byte (i32.and (i32.shr_u (local.get $word) (i32.const 16)) (i32.const 255)))
        (local.set $low (i32.and (local.get $byte) (i32.const 127)))
        (i32.store8 (i32.or (local.get $previous) (local.get $low)) (local.get $stamp))
        (local.set $previous (i32.shl (local.get $low) (i32.const 7)))
        (local.set $state (i32.load8_u offset=16384 (i32.or (i32.shl (local.get $state) (i32.const 8)) (local.get $byte))))
        ;; byte 3: its pair with the byte before, then the run of digits
        (local.set $byte (i32.shr_u (local.get $word) (i32.const 24)))
        (local.set $low (i32.and (local.get $byte) (i32.const 127)))
        (i32.store8 (i32.or (local.get $previous) (local.get $low)) (local.get $stamp))
        (local.set $previous (i32.shl (local.get $low) (i32.const 7)))
        (local.set $state (i32.load8_u offset=16384 (i32.or (i32.shl (local.get $state) (i32.const 8)) (local.get $byte))))
        (local.set $at (i32.add (local.get $at) (i32.const 4)))
        (br_if $turn (i32.lt_u (local.get $at) (local.get $end)))))
    (i32.eq (local.get $state) (i32.const 9)))
)
