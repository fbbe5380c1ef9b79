;; JSON string escaping of valid UTF-8 bytes, 16 bytes at a time (WebAssembly SIMD).
;; esc(src, n, dst) writes the UTF-8 bytes of JSON.stringify(text) (quotes included) for the text
;; src[0, n) at dst and returns the offset just past them. Exactly what JSON.stringify escapes:
;; '"', '\' and the bytes < 0x20 (\b \t \n \f \r by name, the others as \u00xx, lowercase hex);
;; every other byte of valid UTF-8 is copied. dst needs 6n + 2 bytes plus 16 of slack: a clean
;; block is stored whole before the escape inside it overwrites its tail.
;; Memory: bytes 0-255 the escape table (0 copy, 1 \u00xx, else the letter after the backslash),
;; 256-271 the hex digits; the caller's buffers from ESC_FREE (1024) on.
;; Assembled by wabt (tools/build-wasm.mjs) into json-escape-wasm.ts; a test checks the two agree.
(module
  (memory (export "mem") 1)
  (data (i32.const 0) "\01\01\01\01\01\01\01\01\62\74\6e\01\66\72\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\00\00\22\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\5c\00\00\00")
  (data (i32.const 256) "0123456789abcdef")
  (func $one (param $b i32) (param $o i32) (result i32)
    (local $e i32)
    (local.set $e (i32.load8_u (local.get $b)))
    (i32.store8 (local.get $o) (i32.const 92))
    (if (result i32) (i32.ne (local.get $e) (i32.const 1))
      (then
        (i32.store8 offset=1 (local.get $o) (local.get $e))
        (i32.add (local.get $o) (i32.const 2)))
      (else
        (i32.store8 offset=1 (local.get $o) (i32.const 117))
        (i32.store8 offset=2 (local.get $o) (i32.const 48))
        (i32.store8 offset=3 (local.get $o) (i32.const 48))
        (i32.store8 offset=4 (local.get $o) (i32.load8_u offset=256 (i32.shr_u (local.get $b) (i32.const 4))))
        (i32.store8 offset=5 (local.get $o) (i32.load8_u offset=256 (i32.and (local.get $b) (i32.const 15))))
        (i32.add (local.get $o) (i32.const 6)))))
  (func (export "esc") (param $src i32) (param $n i32) (param $dst i32) (result i32)
    (local $i i32) (local $o i32) (local $last i32) (local $v v128) (local $mask i32) (local $k i32) (local $b i32)
    (i32.store8 (local.get $dst) (i32.const 34))
    (local.set $o (i32.add (local.get $dst) (i32.const 1)))
    (local.set $last (i32.sub (local.get $n) (i32.const 16)))
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.gt_s (local.get $i) (local.get $last)))
        (local.set $v (v128.load (i32.add (local.get $src) (local.get $i))))
        (v128.store (local.get $o) (local.get $v))
        (local.set $mask (i8x16.bitmask (v128.or
          (v128.or
            (i8x16.lt_u (local.get $v) (v128.const i8x16 32 32 32 32 32 32 32 32 32 32 32 32 32 32 32 32))
            (i8x16.eq (local.get $v) (v128.const i8x16 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34)))
          (i8x16.eq (local.get $v) (v128.const i8x16 92 92 92 92 92 92 92 92 92 92 92 92 92 92 92 92)))))
        (if (i32.eqz (local.get $mask))
          (then
            (local.set $o (i32.add (local.get $o) (i32.const 16)))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $blocks)))
        (local.set $k (i32.ctz (local.get $mask)))
        (local.set $i (i32.add (local.get $i) (local.get $k)))
        (local.set $o (call $one
          (i32.load8_u (i32.add (local.get $src) (local.get $i)))
          (i32.add (local.get $o) (local.get $k))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $blocks)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $b (i32.load8_u (i32.add (local.get $src) (local.get $i))))
        (if (i32.load8_u (local.get $b))
          (then (local.set $o (call $one (local.get $b) (local.get $o))))
          (else
            (i32.store8 (local.get $o) (local.get $b))
            (local.set $o (i32.add (local.get $o) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tail)))
    (i32.store8 (local.get $o) (i32.const 34))
    (i32.add (local.get $o) (i32.const 1))))
