;; The census pass of src/guardrails/census.ts, in WebAssembly: V8 compiles a byte loop over a typed array with a
;; bounds check, an interrupt check and an overflow check per access and turn (about 13 instructions a byte for the
;; pairs alone, 25 with the run of digits); here memory accesses need no bounds check, the classes of sixteen bytes
;; are read at a time (SIMD), and a pair is one 16-bit load and one store. The gates' pair programs run here too.
;; scripts/build-census-wasm.mjs assembles it (wabt) into census-wasm.ts; test/unit/guardrails/census.test.ts
;; checks the two agree.
;;
;; The pairs are of folded bytes: a letter of either case is its low five bits (1 to 26), any other byte its low
;; six bits, so every folded byte is below 64 and the pair (a, b) at a | b << 8 lies in the first 64 bytes of its
;; row: all the pairs a text can stamp lie in 64 cache lines.
;;
;; Memory (2 pages, exported):
;; - [0, 16384) the pairs, a byte each, holding the stamp of the census that saw it;
;; - [16384, 16400) the separator table, filled by census.ts: lane i is 0xff when the byte 0x20 + i is one of the
;;   characters numbers are written with besides the digits, else 0; [16400, 16512) the constants below;
;; - [20480, 20480 + 65536 + 16) the text's UTF-8 (folded in place by `count`) and sixteen zero bytes;
;; - [90112, 131072) the gates' programs (census.ts's pairSet), as u16s, positions counted in u16s from 90112.
(module
  (memory (export "memory") 2)
  ;; Lane constants, loaded once per call (a v128.const in a loop is rebuilt on every turn): 0x50 and -118 (a digit
  ;; plus 0x50 is below -118 as a signed byte, and no other byte is), 0x20, 31 and -102 (a byte or 0x20 plus 31 is
  ;; below -102 for letters of either case), 63 (a capital plus 63 is below -102), 0x3f.
  (data (i32.const 16400)
    "\50\50\50\50\50\50\50\50\50\50\50\50\50\50\50\50"
    "\8a\8a\8a\8a\8a\8a\8a\8a\8a\8a\8a\8a\8a\8a\8a\8a"
    "\20\20\20\20\20\20\20\20\20\20\20\20\20\20\20\20"
    "\1f\1f\1f\1f\1f\1f\1f\1f\1f\1f\1f\1f\1f\1f\1f\1f"
    "\9a\9a\9a\9a\9a\9a\9a\9a\9a\9a\9a\9a\9a\9a\9a\9a"
    "\3f\3f\3f\3f\3f\3f\3f\3f\3f\3f\3f\3f\3f\3f\3f\3f")

  ;; Reads the text's `length` bytes, folds them in place and stamps their pairs. Answers bit 0: nine digits occur
  ;; in one run of number characters; bit 1: two capitals followed by two digits occur (where an IBAN starts).
  ;; Sixteen zero bytes past the text make the last block whole: no number characters (a run ends), and pairs
  ;; with NUL (0 is also a folded `@`: such pairs only let more texts through a gate).
  (func (export "count") (param $length i32) (param $stamp i32) (result i32)
    (local $at i32) (local $bytes v128) (local $digit v128) (local $digits i32) (local $others i32) (local $capitals i32)
    (local $run i32) (local $nine i32) (local $shape i32) (local $capitalWindow i32) (local $digitWindow i32)
    (local $lastDigits i32) (local $lastCapitals i32) (local $starts i32) (local $from i32) (local $to i32)
    (local $separators v128) (local $bias v128) (local $below v128) (local $space v128) (local $letterBias v128)
    (local $letterBelow v128) (local $six v128)
    (v128.store offset=20480 (local.get $length) (v128.const i64x2 0 0))
    (local.set $separators (v128.load offset=16384 (i32.const 0)))
    (local.set $bias (v128.load offset=16400 (i32.const 0)))
    (local.set $below (v128.load offset=16416 (i32.const 0)))
    (local.set $space (v128.load offset=16432 (i32.const 0)))
    (local.set $letterBias (v128.load offset=16448 (i32.const 0)))
    (local.set $letterBelow (v128.load offset=16464 (i32.const 0)))
    (local.set $six (v128.load offset=16480 (i32.const 0)))
    (block $done
      (br_if $done (i32.eqz (local.get $length)))
      ;; Sixteen bytes a turn: their classes as bit masks (bit i for byte i), then the bytes folded.
      (loop $block
        (local.set $bytes (v128.load offset=20480 (local.get $at)))
        (local.set $digit (i8x16.lt_s (i8x16.add (local.get $bytes) (local.get $bias)) (local.get $below)))
        (local.set $digits (i8x16.bitmask (local.get $digit)))
        ;; A separator: byte - 0x20 picks its lane of the separator table (any other byte picks past it: 0).
        (local.set $others
          (i32.xor
            (i8x16.bitmask (v128.or (local.get $digit) (i8x16.swizzle (local.get $separators) (i8x16.sub (local.get $bytes) (local.get $space)))))
            (i32.const 0xffff)))
        (local.set $capitals (i8x16.bitmask (i8x16.lt_s (i8x16.add (local.get $bytes) (local.get $six)) (local.get $letterBelow))))
        ;; $run: the digits in the run of number characters still open. No digit (most blocks of prose and keys):
        ;; the run goes on through separators alone, or ends.
        (if (i32.eqz (local.get $digits))
          (then (local.set $run (select (i32.const 0) (local.get $run) (local.get $others))))
          (else
            (if (i32.eqz (local.get $others))
              (then (local.set $run (i32.add (local.get $run) (i32.popcnt (local.get $digits)))))
              (else
                ;; The open run ends at the block's first byte that is no number character (bits below its lowest bit).
                (local.set $run
                  (i32.add (local.get $run)
                    (i32.popcnt (i32.and (local.get $digits) (i32.sub (i32.and (local.get $others) (i32.sub (i32.const 0) (local.get $others))) (i32.const 1))))))
                (local.set $nine (i32.or (local.get $nine) (i32.ge_u (local.get $run) (i32.const 9))))
                ;; Runs wholly inside the block can hold nine digits only when the block does. Bit i of $starts:
                ;; bytes i to i + 8 are number characters; its lowest bit is where such a run starts, and the run
                ;; ends at the next byte that is no number character (past the block: bit 16, the block's end).
                ;; Written out here rather than called: a call would have the loop's registers saved around it on
                ;; every turn.
                (if (i32.ge_u (i32.popcnt (local.get $digits)) (i32.const 9))
                  (then
                    (local.set $starts (i32.xor (local.get $others) (i32.const 0xffff)))
                    (local.set $starts
                      (i32.and (i32.and (local.get $starts) (i32.shr_u (local.get $starts) (i32.const 1)))
                        (i32.and (i32.shr_u (local.get $starts) (i32.const 2)) (i32.shr_u (local.get $starts) (i32.const 3)))))
                    (local.set $starts
                      (i32.and (i32.and (local.get $starts) (i32.shr_u (local.get $starts) (i32.const 4)))
                        (i32.shr_u (i32.xor (local.get $others) (i32.const 0xffff)) (i32.const 8))))
                    (block $none
                      (loop $inner
                        (br_if $none (i32.eqz (local.get $starts)))
                        (local.set $from (i32.ctz (local.get $starts)))
                        (local.set $to (i32.ctz (i32.or (i32.and (local.get $others) (i32.shl (i32.const -1) (local.get $from))) (i32.const 0x10000))))
                        (local.set $nine
                          (i32.or (local.get $nine)
                            (i32.ge_u
                              (i32.popcnt (i32.and (local.get $digits) (i32.sub (i32.shl (i32.const 1) (local.get $to)) (i32.shl (i32.const 1) (local.get $from)))))
                              (i32.const 9))))
                        (local.set $starts (i32.and (local.get $starts) (i32.shl (i32.const -1) (local.get $to))))
                        (br $inner)))))
                ;; The run after the block's last byte that is no number character goes on into the next block.
                (local.set $run (i32.popcnt (i32.shr_u (local.get $digits) (i32.sub (i32.const 32) (i32.clz (local.get $others))))))))
            (local.set $nine (i32.or (local.get $nine) (i32.ge_u (local.get $run) (i32.const 9))))))
        ;; Two capitals and two digits, over this block and the last three bytes of the one before (bits 0 to 2);
        ;; only where capitals are (most blocks have none).
        (local.set $capitalWindow (i32.or (i32.shl (local.get $capitals) (i32.const 3)) (i32.shr_u (local.get $lastCapitals) (i32.const 13))))
        (if (local.get $capitalWindow)
          (then
            (local.set $digitWindow (i32.or (i32.shl (local.get $digits) (i32.const 3)) (i32.shr_u (local.get $lastDigits) (i32.const 13))))
            (local.set $shape
              (i32.or (local.get $shape)
                (i32.and
                  (i32.and (local.get $capitalWindow) (i32.shr_u (local.get $capitalWindow) (i32.const 1)))
                  (i32.and (i32.shr_u (local.get $digitWindow) (i32.const 2)) (i32.shr_u (local.get $digitWindow) (i32.const 3))))))))
        (local.set $lastCapitals (local.get $capitals))
        (local.set $lastDigits (local.get $digits))
        ;; Folded: a letter (byte or 0x20 is a to z) keeps its low five bits, any other byte its low six.
        (v128.store offset=20480 (local.get $at)
          (v128.and (local.get $bytes)
            (v128.xor (local.get $six)
              (v128.and (local.get $space)
                (i8x16.lt_s (i8x16.add (v128.or (local.get $bytes) (local.get $space)) (local.get $letterBias)) (local.get $letterBelow))))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br_if $block (i32.lt_u (local.get $at) (local.get $length))))
      ;; The pairs of the folded bytes, sixteen a turn (each byte with the one after it, as one little-endian u16).
      (local.set $at (i32.const 0))
      (loop $pairs
        (i32.store8 (i32.load16_u offset=20480 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20481 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20482 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20483 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20484 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20485 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20486 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20487 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20488 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20489 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20490 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20491 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20492 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20493 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20494 (local.get $at)) (local.get $stamp))
        (i32.store8 (i32.load16_u offset=20495 (local.get $at)) (local.get $stamp))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br_if $pairs (i32.lt_u (local.get $at) (local.get $length)))))
    ;; The zero bytes after the text made the pair (0, 0) or not, by the text's length: it is always seen.
    (i32.store8 (i32.const 0) (local.get $stamp))
    (i32.or (local.get $nine) (i32.shl (i32.ne (local.get $shape) (i32.const 0)) (i32.const 1))))

  ;; Runs the gate program at [$group, $end) (u16 positions from 90112) over the pairs stamped $stamp: 1 when one of
  ;; its groups holds, else 0. A group: the position of its rests, then its first test; the groups lie side by side
  ;; (most texts rule a group out by its first test, so the rests are read seldom). A group holds when its first
  ;; test and every test of one rest hold. The rests: the position after them, then each rest as the position after
  ;; it and its tests. A test: its number of ways, then the ways (pair addresses); it holds when one is stamped.
  (func (export "holds") (param $group i32) (param $end i32) (param $stamp i32) (result i32)
    (local $next i32) (local $rest i32) (local $restsEnd i32) (local $restEnd i32) (local $test i32) (local $all i32)
    (block $none
      (loop $groups
        (br_if $none (i32.ge_u (local.get $group) (local.get $end)))
        (local.set $next (call $test (i32.add (local.get $group) (i32.const 1)) (local.get $stamp)))
        (if (i32.ge_s (local.get $next) (i32.const 0))
          (then
            (local.set $rest (i32.load16_u offset=90112 (i32.shl (local.get $group) (i32.const 1))))
            (local.set $restsEnd (i32.load16_u offset=90112 (i32.shl (local.get $rest) (i32.const 1))))
            (local.set $rest (i32.add (local.get $rest) (i32.const 1)))
            (block $rests
              (loop $each
                (br_if $rests (i32.ge_u (local.get $rest) (local.get $restsEnd)))
                (local.set $restEnd (i32.load16_u offset=90112 (i32.shl (local.get $rest) (i32.const 1))))
                (local.set $test (i32.add (local.get $rest) (i32.const 1)))
                (local.set $all (i32.const 1))
                (block $tests
                  (loop $tested
                    (br_if $tests (i32.ge_u (local.get $test) (local.get $restEnd)))
                    (local.set $test (call $test (local.get $test) (local.get $stamp)))
                    (br_if $tested (i32.ge_s (local.get $test) (i32.const 0)))
                    (local.set $all (i32.const 0))))
                (if (local.get $all) (then (return (i32.const 1))))
                (local.set $rest (local.get $restEnd))
                (br $each))))
          (else (local.set $next (i32.sub (i32.const 0) (local.get $next)))))
        ;; $test answers the position after the test, negated when it failed.
        (local.set $group (local.get $next))
        (br $groups)))
    (i32.const 0))

  ;; The test at $at: the position after it when one of its ways is stamped $stamp, else that position negated.
  (func $test (param $at i32) (param $stamp i32) (result i32)
    (local $way i32) (local $end i32)
    (local.set $way (i32.add (local.get $at) (i32.const 1)))
    (local.set $end (i32.add (local.get $way) (i32.load16_u offset=90112 (i32.shl (local.get $at) (i32.const 1)))))
    (block $missing
      (loop $ways
        (br_if $missing (i32.ge_u (local.get $way) (local.get $end)))
        (if (i32.eq (i32.load8_u (i32.load16_u offset=90112 (i32.shl (local.get $way) (i32.const 1)))) (local.get $stamp))
          (then (return (local.get $end))))
        (local.set $way (i32.add (local.get $way) (i32.const 1)))
        (br $ways)))
    (i32.sub (i32.const 0) (local.get $end)))
)
