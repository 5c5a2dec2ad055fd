// jax-js: `right_shift` of a negative int32 is a logical shift, not an arithmetic one.
//
// NumPy (and JAX, and C for signed ints): `right_shift(int32 -8, 1)` is -4 and
// `right_shift(int32 -202095, 20)` is -1: the sign bit is copied in. jax-js 0.1.25 shifts in
// zeros, as for an unsigned int: 2147483644 and 4095. Unsigned (uint32) shifts are right.
//
// Breaks LZ-NUM-001 (integer results equal the oracle's exactly) and LZ-NUM-014 (x >>= y).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const x = [-8, -202095, 74730], s = [1, 20, 7];
const got = Array.from(np.rightShift(np.array(new Int32Array(x), { dtype: np.int32 }),
  np.array(new Int32Array(s), { dtype: np.int32 })).dataSync());
const want = x.map((v, i) => v >> s[i]);  // JavaScript's >> is the arithmetic int32 shift
const bug = JSON.stringify(got) !== JSON.stringify(want);
console.log(`right_shift(int32 ${JSON.stringify(x)}, ${JSON.stringify(s)}): jax-js ${JSON.stringify(got)}; NumPy ${JSON.stringify(want)}${bug ? "   <-- wrong" : ""}`);
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
