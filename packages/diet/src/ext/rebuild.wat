;; The extended diet's block rebuild (docs/extended-diet.md, "Rebuilding line i of a block") in
;; WebAssembly: every line of a whole block from its streams and shape templates, 16 bytes at a time.
;; It is a fast path only: it returns -1 wherever the JavaScript decoder (rebuildLines in
;; block-codec.ts) would throw, and for what it does not handle (timestamps outside years
;; 1970-9999, piece ids above 2^31 - 1); the caller then runs the JavaScript decoder, which gives
;; the bytes or the error. Its checks are the JavaScript decoder's, in the same order.
;;
;; rebuild(P) reads its job at P (i32 fields, absolute addresses; the caller lays it out):
;;   0 lines        4 size (the block's bytes)  8 out        12 shapeOf (i32 per line)
;;  16 lenOf (i32 per line, clamped to size + 1)  20 shape table (20 bytes per shape id >= 1:
;;     template, segment bounds (i32 pairs), hole kinds (u8), holes, columns (i32); template 0 = not laid out)
;;  24/28 VERBATIM cursor/end  32/36 ID_MS  40/44 ID_RAND  48/52 TS  56/60 TEXT  64/68 TEXTN
;;  72 column starts (i32 each)  76 column ends  80 column cursors (start = the column's start)
;;  84 columns  88 line starts (i32, out)  92 line ends (out)  96 cursor record (out: before every
;;     line j*128, j >= 1: T, prev, the six stream positions, then each column's, as f64)
;; 100 last line unterminated (0/1)
;; 104 the next line, 108 the bytes of the block written by earlier calls, 112 the output region's
;;     size, 120 T (i64), 128 the previous piece id (i64), 136-156 the six streams' starts,
;; 160 the pack's frame table, 164 its first pieces, 168 its frames (0: every piece through the import)
;; and returns the bytes it wrote at out (lines from the next one, as many as fit in the region;
;; the cursors, the next line and the bytes written are saved at P for the next call), or -1. Every region needs 16 readable bytes past its end and the
;; output 64 writable ones (copies move 16 bytes at a time). Pieces are read from the frame table's
;; frames; for a frame not in it the import piece(id) returns the address of pack piece id's bytes
;; in this memory and stores their end (i32) at address 4 (-1: not in this memory). The f64 at
;; address 8 is the frames' use clock (the table's last-use values come from it).
;; The memory is shared (a SharedArrayBuffer; up to 4 GiB): a decode worker posts a rebuilt block
;; as a view of it (no copy out, no transfer) and a grown memory leaves the older views valid.
;; Assembled by wabt (tools/build-wasm.mjs) into rebuild-wasm.ts; a test checks the two agree.
(module
  (import "env" "piece" (func $piece (param i32) (result i32)))
  (memory (export "mem") 1 65536 shared)
  (global $se (mut i32) (i32.const 0))
  (global $ok (mut i32) (i32.const 1))
  ;; The pack: the frame table (16 bytes a frame: address (0 = not in this memory), piece starts,
  ;; f64 last use), the frames' first pieces (and the total), the frame count; the current frame.
  (global $ftab (mut i32) (i32.const 0))
  (global $fp (mut i32) (i32.const 0))
  (global $nf (mut i32) (i32.const 0))
  (global $cf (mut i32) (i32.const 0))
  (global $ce (mut i32) (i32.const 0))
  (global $ca (mut i32) (i32.const 0))
  (global $cs (mut i32) (i32.const 0))
  (global $pe (mut i32) (i32.const 0))

  ;; Piece id's address ($pe: its end), from a frame in this memory, else through the import (which
  ;; may load the frame, evicting others); -1 when the import has it nowhere.
  (func $pieceAt (param $id i32) (result i32)
    (local $lo i32) (local $hi i32) (local $mid i32) (local $e i32) (local $j i32) (local $c f64)
    (if (i32.or (i32.lt_u (local.get $id) (global.get $cf)) (i32.ge_u (local.get $id) (global.get $ce)))
      (then
        (block $js
          (br_if $js (i32.eqz (global.get $nf)))
          (br_if $js (i32.ge_u (local.get $id) (i32.load (i32.add (global.get $fp) (i32.shl (global.get $nf) (i32.const 2))))))
          (local.set $hi (i32.sub (global.get $nf) (i32.const 1)))
          (block $found
            (loop $bs
              (br_if $found (i32.ge_u (local.get $lo) (local.get $hi)))
              (local.set $mid (i32.shr_u (i32.add (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)) (i32.const 1)))
              (if (i32.le_u (i32.load (i32.add (global.get $fp) (i32.shl (local.get $mid) (i32.const 2)))) (local.get $id))
                (then (local.set $lo (local.get $mid)))
                (else (local.set $hi (i32.sub (local.get $mid) (i32.const 1)))))
              (br $bs)))
          (local.set $e (i32.add (global.get $ftab) (i32.shl (local.get $lo) (i32.const 4))))
          (br_if $js (i32.eqz (i32.load (local.get $e))))
          (global.set $cf (i32.load (i32.add (global.get $fp) (i32.shl (local.get $lo) (i32.const 2)))))
          (global.set $ce (i32.load offset=4 (i32.add (global.get $fp) (i32.shl (local.get $lo) (i32.const 2)))))
          (global.set $ca (i32.load (local.get $e)))
          (global.set $cs (i32.load offset=4 (local.get $e)))
          (local.set $c (f64.add (f64.load (i32.const 8)) (f64.const 1)))
          (f64.store (i32.const 8) (local.get $c))
          (f64.store offset=8 (local.get $e) (local.get $c))
          (br 1))
        ;; Not here: the import loads it (its answer's end at address 4); it may evict the current frame.
        (global.set $cf (i32.const 0))
        (global.set $ce (i32.const 0))
        (local.set $j (call $piece (local.get $id)))
        (global.set $pe (i32.load (i32.const 4)))
        (return (local.get $j))))
    (local.set $j (i32.add (global.get $cs) (i32.shl (i32.sub (local.get $id) (global.get $cf)) (i32.const 2))))
    (global.set $pe (i32.sub (i32.add (global.get $ca) (i32.load offset=4 (local.get $j))) (i32.const 1)))
    (i32.add (global.get $ca) (i32.load (local.get $j))))

  ;; The starts of a pack frame's pieces (each ends with a newline): len bytes at a, exactly n
  ;; pieces, starts at out (i32, frame-relative, n + 1 of them: the last is len). 1 when the frame
  ;; holds exactly n pieces and ends with its last newline, else 0 (the JavaScript reader then
  ;; scans it lazily and says what is wrong when it gets there). Reads up to 15 bytes past a + len.
  (func (export "starts") (param $a i32) (param $len i32) (param $out i32) (param $n i32) (result i32)
    (local $pos i32) (local $m i32) (local $cnt i32)
    (i32.store (local.get $out) (i32.const 0))
    (block $end
      (loop $l
        (br_if $end (i32.ge_u (local.get $pos) (local.get $len)))
        (local.set $m (i8x16.bitmask (i8x16.eq (v128.load (i32.add (local.get $a) (local.get $pos))) (i8x16.splat (i32.const 10)))))
        (if (i32.lt_u (i32.sub (local.get $len) (local.get $pos)) (i32.const 16))
          (then (local.set $m (i32.and (local.get $m) (i32.sub (i32.shl (i32.const 1) (i32.sub (local.get $len) (local.get $pos))) (i32.const 1))))))
        (block $bits
          (loop $b
            (br_if $bits (i32.eqz (local.get $m)))
            (local.set $cnt (i32.add (local.get $cnt) (i32.const 1)))
            (if (i32.gt_u (local.get $cnt) (local.get $n)) (then (return (i32.const 0))))
            (i32.store (i32.add (local.get $out) (i32.shl (local.get $cnt) (i32.const 2)))
              (i32.add (i32.add (local.get $pos) (i32.ctz (local.get $m))) (i32.const 1)))
            (local.set $m (i32.and (local.get $m) (i32.sub (local.get $m) (i32.const 1))))
            (br $b)))
        (local.set $pos (i32.add (local.get $pos) (i32.const 16)))
        (br $l)))
    (i32.and (i32.eq (local.get $cnt) (local.get $n))
      (i32.eq (i32.load (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2)))) (local.get $len))))

  ;; Copy n bytes from s to d (writes up to 15 bytes past d + n).
  (func $cp (param $s i32) (param $n i32) (param $d i32)
    (local $i i32)
    (if (i32.le_u (local.get $n) (i32.const 16))
      (then (v128.store (local.get $d) (v128.load (local.get $s))) (return)))
    (if (i32.gt_u (local.get $n) (i32.const 256))
      (then (memory.copy (local.get $d) (local.get $s) (local.get $n)) (return)))
    (loop $l
      (v128.store (i32.add (local.get $d) (local.get $i)) (v128.load (i32.add (local.get $s) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n)))))

  ;; Copy the value at s up to its newline (which must lie before e) to d; returns the new d and sets
  ;; $se to the newline's address, or -1 (no newline before e, or more than lim - d bytes).
  (func $cv (param $s i32) (param $e i32) (param $d i32) (param $lim i32) (result i32)
    (local $v v128) (local $m i32)
    (loop $l
      (if (i32.ge_u (local.get $s) (local.get $e)) (then (return (i32.const -1))))
      (local.set $v (v128.load (local.get $s)))
      (v128.store (local.get $d) (local.get $v))
      (local.set $m (i8x16.bitmask (i8x16.eq (local.get $v) (i8x16.splat (i32.const 10)))))
      (if (local.get $m)
        (then
          (local.set $m (i32.ctz (local.get $m)))
          (local.set $s (i32.add (local.get $s) (local.get $m)))
          (if (i32.ge_u (local.get $s) (local.get $e)) (then (return (i32.const -1))))
          (global.set $se (local.get $s))
          (return (i32.add (local.get $d) (local.get $m)))))
      (local.set $s (i32.add (local.get $s) (i32.const 16)))
      (local.set $d (i32.add (local.get $d) (i32.const 16)))
      (br_if $l (i32.le_u (local.get $d) (local.get $lim))))
    (i32.const -1))

  ;; The signed decimal at p ending at its newline before e; $se = just past the newline. $ok = 0
  ;; when it is not one or its magnitude is above 2^53 - 1 (every JavaScript use of such a value fails).
  (func $ri (param $p i32) (param $e i32) (result i64)
    (local $neg i32) (local $v i64) (local $c i32) (local $f i32)
    (global.set $ok (i32.const 0))
    (if (i32.ge_u (local.get $p) (local.get $e)) (then (return (i64.const 0))))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 45))
      (then (local.set $neg (i32.const 1)) (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (local.set $f (local.get $p))
    (block $done
      (loop $l
        (if (i32.ge_u (local.get $p) (local.get $e)) (then (return (i64.const 0))))
        (local.set $c (i32.load8_u (local.get $p)))
        (br_if $done (i32.eq (local.get $c) (i32.const 10)))
        (local.set $c (i32.sub (local.get $c) (i32.const 48)))
        (if (i32.gt_u (local.get $c) (i32.const 9)) (then (return (i64.const 0))))
        (local.set $v (i64.add (i64.mul (local.get $v) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
        (if (i64.gt_u (local.get $v) (i64.const 9007199254740991)) (then (return (i64.const 0))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $l)))
    (if (i32.eq (local.get $p) (local.get $f)) (then (return (i64.const 0))))
    (global.set $se (i32.add (local.get $p) (i32.const 1)))
    (global.set $ok (i32.const 1))
    (if (result i64) (local.get $neg) (then (i64.sub (i64.const 0) (local.get $v))) (else (local.get $v))))

  ;; Write the decimal digits of x (< 10^8) ending just before d + n, n digits; returns nothing.
  (func $digits (param $d i32) (param $x i32) (param $n i32)
    (loop $l
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (i32.store8 (i32.add (local.get $d) (local.get $n)) (i32.add (i32.const 48) (i32.rem_u (local.get $x) (i32.const 10))))
      (local.set $x (i32.div_u (local.get $x) (i32.const 10)))
      (br_if $l (local.get $n))))

  ;; How many decimal digits x (< 2^31) has.
  (func $ndig (param $x i32) (result i32)
    (local $n i32)
    (local.set $n (i32.const 1))
    (block $b
      (loop $l
        (br_if $b (i32.lt_u (local.get $x) (i32.const 10)))
        (local.set $x (i32.div_u (local.get $x) (i32.const 10)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $n))

  ;; Write the decimal of 0 <= v < 2^53 at d; returns the bytes written.
  (func $dec (param $d i32) (param $v i64) (result i32)
    (local $hi i32) (local $lo i32) (local $n i32)
    (if (i64.lt_u (local.get $v) (i64.const 100000000))
      (then
        (local.set $lo (i32.wrap_i64 (local.get $v)))
        (local.set $n (call $ndig (local.get $lo)))
        (call $digits (local.get $d) (local.get $lo) (local.get $n))
        (return (local.get $n))))
    (local.set $hi (i32.wrap_i64 (i64.div_u (local.get $v) (i64.const 100000000))))
    (local.set $lo (i32.wrap_i64 (i64.rem_u (local.get $v) (i64.const 100000000))))
    (local.set $n (call $ndig (local.get $hi)))
    (call $digits (local.get $d) (local.get $hi) (local.get $n))
    (call $digits (i32.add (local.get $d) (local.get $n)) (local.get $lo) (i32.const 8))
    (i32.add (local.get $n) (i32.const 8)))

  ;; Write '"' + new Date(ms).toISOString() + '"' (26 bytes) at d; 0 (nothing to rely on written)
  ;; outside 1970-01-01 .. 9999-12-31, where the JavaScript decoder takes over.
  (func $iso (param $d i32) (param $ms i64) (result i32)
    (local $days i32) (local $r i32) (local $z i32) (local $era i32) (local $doe i32) (local $yoe i32)
    (local $y i32) (local $doy i32) (local $mp i32) (local $m i32) (local $dd i32)
    (if (i32.or (i64.lt_s (local.get $ms) (i64.const 0)) (i64.ge_s (local.get $ms) (i64.const 253402300800000)))
      (then (return (i32.const 0))))
    (local.set $days (i32.wrap_i64 (i64.div_u (local.get $ms) (i64.const 86400000))))
    (local.set $r (i32.wrap_i64 (i64.rem_u (local.get $ms) (i64.const 86400000))))
    ;; civil_from_days (H. Hinnant), days >= 0.
    (local.set $z (i32.add (local.get $days) (i32.const 719468)))
    (local.set $era (i32.div_u (local.get $z) (i32.const 146097)))
    (local.set $doe (i32.sub (local.get $z) (i32.mul (local.get $era) (i32.const 146097))))
    (local.set $yoe (i32.div_u
      (i32.sub (i32.add (i32.sub (local.get $doe) (i32.div_u (local.get $doe) (i32.const 1460)))
                        (i32.div_u (local.get $doe) (i32.const 36524)))
               (i32.div_u (local.get $doe) (i32.const 146096)))
      (i32.const 365)))
    (local.set $y (i32.add (local.get $yoe) (i32.mul (local.get $era) (i32.const 400))))
    (local.set $doy (i32.sub (local.get $doe)
      (i32.sub (i32.add (i32.mul (local.get $yoe) (i32.const 365)) (i32.div_u (local.get $yoe) (i32.const 4)))
               (i32.div_u (local.get $yoe) (i32.const 100)))))
    (local.set $mp (i32.div_u (i32.add (i32.mul (local.get $doy) (i32.const 5)) (i32.const 2)) (i32.const 153)))
    (local.set $dd (i32.add (i32.sub (local.get $doy)
      (i32.div_u (i32.add (i32.mul (local.get $mp) (i32.const 153)) (i32.const 2)) (i32.const 5))) (i32.const 1)))
    (local.set $m (if (result i32) (i32.lt_u (local.get $mp) (i32.const 10))
      (then (i32.add (local.get $mp) (i32.const 3))) (else (i32.sub (local.get $mp) (i32.const 9)))))
    (if (i32.le_u (local.get $m) (i32.const 2)) (then (local.set $y (i32.add (local.get $y) (i32.const 1)))))
    (i32.store8 (local.get $d) (i32.const 34))
    (call $digits (i32.add (local.get $d) (i32.const 1)) (local.get $y) (i32.const 4))
    (i32.store8 offset=5 (local.get $d) (i32.const 45))
    (call $digits (i32.add (local.get $d) (i32.const 6)) (local.get $m) (i32.const 2))
    (i32.store8 offset=8 (local.get $d) (i32.const 45))
    (call $digits (i32.add (local.get $d) (i32.const 9)) (local.get $dd) (i32.const 2))
    (i32.store8 offset=11 (local.get $d) (i32.const 84))
    (call $digits (i32.add (local.get $d) (i32.const 12)) (i32.div_u (local.get $r) (i32.const 3600000)) (i32.const 2))
    (i32.store8 offset=14 (local.get $d) (i32.const 58))
    (call $digits (i32.add (local.get $d) (i32.const 15)) (i32.rem_u (i32.div_u (local.get $r) (i32.const 60000)) (i32.const 60)) (i32.const 2))
    (i32.store8 offset=17 (local.get $d) (i32.const 58))
    (call $digits (i32.add (local.get $d) (i32.const 18)) (i32.rem_u (i32.div_u (local.get $r) (i32.const 1000)) (i32.const 60)) (i32.const 2))
    (i32.store8 offset=20 (local.get $d) (i32.const 46))
    (call $digits (i32.add (local.get $d) (i32.const 21)) (i32.rem_u (local.get $r) (i32.const 1000)) (i32.const 3))
    (i32.store8 offset=24 (local.get $d) (i32.const 90))
    (i32.store8 offset=25 (local.get $d) (i32.const 34))
    (i32.const 26))

  (func (export "rebuild") (param $P i32) (result i32)
    (local $n i32) (local $size i32) (local $out i32) (local $shapeOf i32) (local $lenOf i32) (local $tab i32)
    (local $vAt i32) (local $vEnd i32) (local $iAt i32) (local $iEnd i32) (local $rAt i32) (local $rEnd i32)
    (local $tsAt i32) (local $tsEnd i32) (local $tAt i32) (local $tEnd i32) (local $tnAt i32) (local $tnEnd i32)
    (local $colBase i32) (local $colEnd i32) (local $colAt i32) (local $nCols i32) (local $starts i32) (local $ends i32)
    (local $rec i32) (local $torn i32)
    (local $T i64) (local $prev i64) (local $x i64)
    (local $i i32) (local $o i32) (local $start i32) (local $end i32) (local $sh i32) (local $len i32)
    (local $tpl i32) (local $segs i32) (local $kinds i32) (local $nh i32) (local $cols i32)
    (local $h i32) (local $ci i32) (local $kind i32) (local $c i32) (local $a i32) (local $sz i32)
    (local $np i64) (local $j i64) (local $te i32) (local $q i32) (local $p i32)
    (local $before i32) (local $cap i32) (local $first i32)
    (local.set $n (i32.load offset=0 (local.get $P)))
    (local.set $size (i32.load offset=4 (local.get $P)))
    (local.set $out (i32.load offset=8 (local.get $P)))
    (local.set $shapeOf (i32.load offset=12 (local.get $P)))
    (local.set $lenOf (i32.load offset=16 (local.get $P)))
    (local.set $tab (i32.load offset=20 (local.get $P)))
    (local.set $vAt (i32.load offset=24 (local.get $P)))
    (local.set $vEnd (i32.load offset=28 (local.get $P)))
    (local.set $iAt (i32.load offset=32 (local.get $P)))
    (local.set $iEnd (i32.load offset=36 (local.get $P)))
    (local.set $rAt (i32.load offset=40 (local.get $P)))
    (local.set $rEnd (i32.load offset=44 (local.get $P)))
    (local.set $tsAt (i32.load offset=48 (local.get $P)))
    (local.set $tsEnd (i32.load offset=52 (local.get $P)))
    (local.set $tAt (i32.load offset=56 (local.get $P)))
    (local.set $tEnd (i32.load offset=60 (local.get $P)))
    (local.set $tnAt (i32.load offset=64 (local.get $P)))
    (local.set $tnEnd (i32.load offset=68 (local.get $P)))
    (local.set $colBase (i32.load offset=72 (local.get $P)))
    (local.set $colEnd (i32.load offset=76 (local.get $P)))
    (local.set $colAt (i32.load offset=80 (local.get $P)))
    (local.set $nCols (i32.load offset=84 (local.get $P)))
    (local.set $starts (i32.load offset=88 (local.get $P)))
    (local.set $ends (i32.load offset=92 (local.get $P)))
    (local.set $rec (i32.load offset=96 (local.get $P)))
    (local.set $torn (i32.load offset=100 (local.get $P)))
    (local.set $i (i32.load offset=104 (local.get $P)))
    (local.set $before (i32.load offset=108 (local.get $P)))
    (local.set $cap (i32.load offset=112 (local.get $P)))
    (local.set $T (i64.load offset=120 (local.get $P)))
    (local.set $prev (i64.load offset=128 (local.get $P)))
    (local.set $first (local.get $i))
    (global.set $ftab (i32.load offset=160 (local.get $P)))
    (global.set $fp (i32.load offset=164 (local.get $P)))
    (global.set $nf (i32.load offset=168 (local.get $P)))
    (global.set $cf (i32.const 0))
    (global.set $ce (i32.const 0))
    (local.set $o (local.get $out))
    (block $fail
      (block $done
        (loop $line
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          ;; The cursors before every line j*128 (j >= 1), for the caller to check against SNAP.
          (if (i32.and (i32.ne (local.get $i) (i32.const 0)) (i32.eqz (i32.and (local.get $i) (i32.const 127))))
            (then
              (local.set $p (i32.add (local.get $rec)
                (i32.mul (i32.sub (i32.shr_u (local.get $i) (i32.const 7)) (i32.const 1)) (i32.shl (i32.add (local.get $nCols) (i32.const 8)) (i32.const 3)))))
              (f64.store offset=0 (local.get $p) (f64.convert_i64_s (local.get $T)))
              (f64.store offset=8 (local.get $p) (f64.convert_i64_s (local.get $prev)))
              (f64.store offset=16 (local.get $p) (f64.convert_i32_u (i32.sub (local.get $vAt) (i32.load offset=136 (local.get $P)))))
              (f64.store offset=24 (local.get $p) (f64.convert_i32_u (i32.sub (local.get $iAt) (i32.load offset=140 (local.get $P)))))
              (f64.store offset=32 (local.get $p) (f64.convert_i32_u (i32.sub (local.get $rAt) (i32.load offset=144 (local.get $P)))))
              (f64.store offset=40 (local.get $p) (f64.convert_i32_u (i32.sub (local.get $tsAt) (i32.load offset=148 (local.get $P)))))
              (f64.store offset=48 (local.get $p) (f64.convert_i32_u (i32.sub (local.get $tAt) (i32.load offset=152 (local.get $P)))))
              (f64.store offset=56 (local.get $p) (f64.convert_i32_u (i32.sub (local.get $tnAt) (i32.load offset=156 (local.get $P)))))
              (local.set $c (i32.const 0))
              (block $cd
                (loop $cl
                  (br_if $cd (i32.ge_u (local.get $c) (local.get $nCols)))
                  (f64.store offset=64 (i32.add (local.get $p) (i32.shl (local.get $c) (i32.const 3)))
                    (f64.convert_i32_u (i32.sub (i32.load (i32.add (local.get $colAt) (i32.shl (local.get $c) (i32.const 2))))
                                                (i32.load (i32.add (local.get $colBase) (i32.shl (local.get $c) (i32.const 2)))))))
                  (local.set $c (i32.add (local.get $c) (i32.const 1)))
                  (br $cl)))))
          (local.set $sh (i32.load (i32.add (local.get $shapeOf) (i32.shl (local.get $i) (i32.const 2)))))
          (local.set $len (i32.load (i32.add (local.get $lenOf) (i32.shl (local.get $i) (i32.const 2)))))
          (local.set $start (local.get $o))
          (br_if $fail (i32.gt_u (i32.add (i32.add (i32.sub (local.get $start) (local.get $out)) (local.get $before)) (local.get $len)) (local.get $size)))
          ;; The output region is full: stop before this line (the caller copies it out and calls again).
          (br_if $done (i32.and (i32.gt_u (local.get $i) (local.get $first))
            (i32.gt_u (i32.add (i32.add (i32.sub (local.get $start) (local.get $out)) (local.get $len)) (i32.const 1)) (local.get $cap))))
          (local.set $end (i32.add (local.get $start) (local.get $len)))
          (if (i32.eqz (local.get $sh))
            (then
              ;; A verbatim line: its bytes up to the newline, exactly len of them.
              (local.set $q (call $cv (local.get $vAt) (local.get $vEnd) (local.get $o) (local.get $end)))
              (br_if $fail (i32.ne (local.get $q) (local.get $end)))
              (local.set $o (local.get $end))
              (local.set $vAt (i32.add (global.get $se) (i32.const 1))))
            (else
              (local.set $p (i32.add (local.get $tab) (i32.mul (i32.sub (local.get $sh) (i32.const 1)) (i32.const 20))))
              (local.set $tpl (i32.load offset=0 (local.get $p)))
              (local.set $segs (i32.load offset=4 (local.get $p)))
              (local.set $kinds (i32.load offset=8 (local.get $p)))
              (local.set $nh (i32.load offset=12 (local.get $p)))
              (local.set $cols (i32.load offset=16 (local.get $p)))
              (br_if $fail (i32.eqz (local.get $tpl)))
              (local.set $a (i32.load (local.get $segs)))
              (local.set $sz (i32.sub (i32.load offset=4 (local.get $segs)) (local.get $a)))
              (br_if $fail (i32.gt_u (i32.add (local.get $o) (local.get $sz)) (local.get $end)))
              (call $cp (i32.add (local.get $tpl) (local.get $a)) (local.get $sz) (local.get $o))
              (local.set $o (i32.add (local.get $o) (local.get $sz)))
              (local.set $h (i32.const 0))
              (local.set $ci (i32.const 0))
              (block $holesDone
                (loop $hole
                  (br_if $holesDone (i32.ge_u (local.get $h) (local.get $nh)))
                  (local.set $kind (i32.load8_u (i32.add (local.get $kinds) (local.get $h))))
                  (block $next
                    ;; STRING (1) and NUMBER (2): the next value of the hole's column.
                    (if (i32.le_u (local.get $kind) (i32.const 2))
                      (then
                        (local.set $c (i32.shl (i32.load (i32.add (local.get $cols) (i32.shl (local.get $ci) (i32.const 2)))) (i32.const 2)))
                        (local.set $ci (i32.add (local.get $ci) (i32.const 1)))
                        (local.set $q (i32.eq (local.get $kind) (i32.const 1)))
                        (if (local.get $q) (then (i32.store8 (local.get $o) (i32.const 34)) (local.set $o (i32.add (local.get $o) (i32.const 1)))))
                        (local.set $o (call $cv (i32.load (i32.add (local.get $colAt) (local.get $c))) (i32.load (i32.add (local.get $colEnd) (local.get $c))) (local.get $o) (local.get $end)))
                        (br_if $fail (i32.lt_s (local.get $o) (i32.const 0)))
                        (if (local.get $q) (then (i32.store8 (local.get $o) (i32.const 34)) (local.set $o (i32.add (local.get $o) (i32.const 1)))))
                        (br_if $fail (i32.gt_u (local.get $o) (local.get $end)))
                        (i32.store (i32.add (local.get $colAt) (local.get $c)) (i32.add (global.get $se) (i32.const 1)))
                        (br $next)))
                    ;; ID (3): T += the ms delta; '"' T '-' rand '"'.
                    (if (i32.eq (local.get $kind) (i32.const 3))
                      (then
                        (br_if $fail (i32.ge_u (local.get $iAt) (local.get $iEnd)))
                        (local.set $x (call $ri (local.get $iAt) (local.get $iEnd)))
                        (br_if $fail (i32.eqz (global.get $ok)))
                        (local.set $iAt (global.get $se))
                        (local.set $T (i64.add (local.get $T) (local.get $x)))
                        (br_if $fail (i64.gt_u (local.get $T) (i64.const 9007199254740991)))
                        (i32.store8 (local.get $o) (i32.const 34))
                        (local.set $o (i32.add (local.get $o) (i32.const 1)))
                        (local.set $o (i32.add (local.get $o) (call $dec (local.get $o) (local.get $T))))
                        (i32.store8 (local.get $o) (i32.const 45))
                        (local.set $o (i32.add (local.get $o) (i32.const 1)))
                        (br_if $fail (i32.gt_u (local.get $o) (i32.add (local.get $end) (i32.const 1))))
                        (local.set $o (call $cv (local.get $rAt) (local.get $rEnd) (local.get $o) (local.get $end)))
                        (br_if $fail (i32.lt_s (local.get $o) (i32.const 0)))
                        (i32.store8 (local.get $o) (i32.const 34))
                        (local.set $o (i32.add (local.get $o) (i32.const 1)))
                        (br_if $fail (i32.gt_u (local.get $o) (local.get $end)))
                        (local.set $rAt (i32.add (global.get $se) (i32.const 1)))
                        (br $next)))
                    ;; TIMESTAMP (4): the ISO-8601 of T + the delta.
                    (if (i32.eq (local.get $kind) (i32.const 4))
                      (then
                        (br_if $fail (i32.ge_u (local.get $tsAt) (local.get $tsEnd)))
                        (local.set $x (call $ri (local.get $tsAt) (local.get $tsEnd)))
                        (br_if $fail (i32.eqz (global.get $ok)))
                        (local.set $tsAt (global.get $se))
                        (local.set $x (i64.add (local.get $T) (local.get $x)))
                        (br_if $fail (i32.eqz (call $iso (local.get $o) (local.get $x))))
                        (local.set $o (i32.add (local.get $o) (i32.const 26)))
                        (br_if $fail (i32.gt_u (local.get $o) (local.get $end)))
                        (br $next)))
                    ;; TEXT (5): TEXTN pieces, each inline ("'" + bytes) or a pack reference, joined by \n.
                    (br_if $fail (i32.ne (local.get $kind) (i32.const 5)))
                    (br_if $fail (i32.ge_u (local.get $tnAt) (local.get $tnEnd)))
                    (local.set $np (call $ri (local.get $tnAt) (local.get $tnEnd)))
                    (br_if $fail (i32.eqz (global.get $ok)))
                    (local.set $tnAt (global.get $se))
                    (br_if $fail (i64.lt_s (local.get $np) (i64.const 1)))
                    (br_if $fail (i32.ge_u (local.get $o) (local.get $end)))
                    (i32.store8 (local.get $o) (i32.const 34))
                    (local.set $o (i32.add (local.get $o) (i32.const 1)))
                    (local.set $j (i64.const 0))
                    (loop $pieces
                      (if (i64.ne (local.get $j) (i64.const 0))
                        (then
                          (br_if $fail (i32.gt_u (i32.add (local.get $o) (i32.const 2)) (local.get $end)))
                          (i32.store16 (local.get $o) (i32.const 0x6e5c))
                          (local.set $o (i32.add (local.get $o) (i32.const 2)))))
                      (br_if $fail (i32.ge_u (local.get $tAt) (local.get $tEnd)))
                      (if (i32.eq (i32.load8_u (local.get $tAt)) (i32.const 39))
                        (then
                          (local.set $o (call $cv (i32.add (local.get $tAt) (i32.const 1)) (local.get $tEnd) (local.get $o) (local.get $end)))
                          (br_if $fail (i32.lt_s (local.get $o) (i32.const 0)))
                          (br_if $fail (i32.gt_u (local.get $o) (local.get $end)))
                          (local.set $te (global.get $se)))
                        (else
                          (local.set $x (call $ri (local.get $tAt) (local.get $tEnd)))
                          (br_if $fail (i32.eqz (global.get $ok)))
                          (local.set $te (i32.sub (global.get $se) (i32.const 1)))
                          (local.set $x (i64.add (i64.add (local.get $prev) (i64.const 1)) (local.get $x)))
                          (br_if $fail (i64.gt_u (local.get $x) (i64.const 2147483647)))
                          (local.set $prev (local.get $x))
                          (local.set $a (call $pieceAt (i32.wrap_i64 (local.get $x))))
                          (br_if $fail (i32.lt_s (local.get $a) (i32.const 0)))
                          (local.set $sz (i32.sub (global.get $pe) (local.get $a)))
                          (br_if $fail (i32.gt_u (i32.add (local.get $o) (local.get $sz)) (local.get $end)))
                          (call $cp (local.get $a) (local.get $sz) (local.get $o))
                          (local.set $o (i32.add (local.get $o) (local.get $sz)))))
                      (local.set $tAt (i32.add (local.get $te) (i32.const 1)))
                      (local.set $j (i64.add (local.get $j) (i64.const 1)))
                      (br_if $pieces (i64.lt_u (local.get $j) (local.get $np))))
                    (br_if $fail (i32.ge_u (local.get $o) (local.get $end)))
                    (i32.store8 (local.get $o) (i32.const 34))
                    (local.set $o (i32.add (local.get $o) (i32.const 1))))
                  ;; The template's bytes after hole h.
                  (local.set $p (i32.add (local.get $segs) (i32.shl (local.get $h) (i32.const 3))))
                  (local.set $a (i32.load offset=8 (local.get $p)))
                  (local.set $sz (i32.sub (i32.load offset=12 (local.get $p)) (local.get $a)))
                  (br_if $fail (i32.gt_u (i32.add (local.get $o) (local.get $sz)) (local.get $end)))
                  (call $cp (i32.add (local.get $tpl) (local.get $a)) (local.get $sz) (local.get $o))
                  (local.set $o (i32.add (local.get $o) (local.get $sz)))
                  (local.set $h (i32.add (local.get $h) (i32.const 1)))
                  (br $hole)))
              (br_if $fail (i32.ne (local.get $o) (local.get $end)))))
          (i32.store (i32.add (local.get $starts) (i32.shl (local.get $i) (i32.const 2))) (i32.add (i32.sub (local.get $start) (local.get $out)) (local.get $before)))
          (i32.store (i32.add (local.get $ends) (i32.shl (local.get $i) (i32.const 2))) (i32.add (i32.sub (local.get $o) (local.get $out)) (local.get $before)))
          (if (i32.or (i32.lt_u (local.get $i) (i32.sub (local.get $n) (i32.const 1))) (i32.eqz (local.get $torn)))
            (then (i32.store8 (local.get $o) (i32.const 10)) (local.set $o (i32.add (local.get $o) (i32.const 1)))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $line)))
      ;; Save the cursors for the next call.
      (i32.store offset=24 (local.get $P) (local.get $vAt))
      (i32.store offset=32 (local.get $P) (local.get $iAt))
      (i32.store offset=40 (local.get $P) (local.get $rAt))
      (i32.store offset=48 (local.get $P) (local.get $tsAt))
      (i32.store offset=56 (local.get $P) (local.get $tAt))
      (i32.store offset=64 (local.get $P) (local.get $tnAt))
      (i32.store offset=104 (local.get $P) (local.get $i))
      (i32.store offset=108 (local.get $P) (i32.add (local.get $before) (i32.sub (local.get $o) (local.get $out))))
      (i64.store offset=120 (local.get $P) (local.get $T))
      (i64.store offset=128 (local.get $P) (local.get $prev))
      (return (i32.sub (local.get $o) (local.get $out))))
    (i32.const -1)))
