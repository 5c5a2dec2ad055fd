// jax-js: ops NumPy defines on integer and boolean arrays are refused (float functions of ints
// and bools at the call; bool comparisons and floor division only when the value is read), or
// give the wrong dtype (`isnan` of ints).
//
// NumPy (and JAX) promote an integer or boolean operand of a float function to a float:
// `sqrt(int32 [4, 9])` is `[2, 3]` (float64; float32 under jax-js's declared defaults, as JAX
// gives), `exp(int32)`, `sin(bool)` likewise; `floor(uint32 [7])` is uint32 `[7]` (NumPy 2 keeps
// integer dtypes in floor, ceil, trunc); `sign(int32 [2, -3, 0])` is int32 `[1, -1, 0]`;
// `isnan(int32)` is a bool array of False; `less(bool [F, T], bool [T, T])` is `[True, False]`;
// `floor_divide(bool [T], bool [T])` is int8 `[1]`. jax-js 0.1.25 raises at the call
// `TypeError: Unsupported dtype for Sqrt: int32` (Exp, Sin, Floor, Ceil, Log, Asin, Atan... on
// int32, uint32 and bool), `sign(int32)` raises "Wrong dtype in where: expected bool, got int32",
// `isnan(int32)` returns an int32 array, and `less`, `less_equal`, `floor_divide` of bools are
// recorded, then the read throws `UnsupportedOpError: Cmplt<bool> (Idiv<bool>) not supported in
// wasm backend`: an error from running, not from the call. (`greater`, `equal` of bools work, and
// so, oddly, does `less(bool [T, T], bool [F, T])`.)
//
// Breaks LZ-NUM-001 (every elementwise op on every dtype NumPy accepts), LZ-NUM-002 (result
// dtypes), LZ-ERR-001 (what cannot run is refused at the call that recorded it).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's answers;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const i32 = (...v) => np.array(new Int32Array(v), { dtype: np.int32 });
const u32 = (...v) => np.array(new Uint32Array(v), { dtype: np.uint32 });
const bools = (...v) => np.array(new Int32Array(v), { dtype: np.bool });
const cases = [
  ["sqrt(int32 [4, 9])", () => np.sqrt(i32(4, 9)), "float32 [2,3]"],
  ["exp(int32 [0])", () => np.exp(i32(0)), "float32 [1]"],
  ["sin(bool [False])", () => np.sin(bools(0)), "float32 [0]"],
  ["floor(uint32 [7])", () => np.floor(u32(7)), "uint32 [7]"],
  ["sign(int32 [2, -3, 0])", () => np.sign(i32(2, -3, 0)), "int32 [1,-1,0]"],
  ["isnan(int32 [1])", () => np.isnan(i32(1)), "bool [0]"],
  ["less(bool [False, True], bool [True, True])", () => np.less(bools(0, 1), bools(1, 1)), "bool [1,0]"],
  ["floor_divide(bool [True], bool [True])", () => np.floorDivide(bools(1), bools(1)), "int8 [1]"],
];
let bug = false;
for (const [what, f, want] of cases) {
  let y, got;
  try { y = f(); } catch (e) { got = `at the call: ${e.constructor.name}: ${e.message}`; }
  if (y) {
    try { got = `${y.dtype} ${JSON.stringify(Array.from(y.dataSync(), Number))}`; } catch (e) { got = `recorded, then at the read: ${e.constructor.name}: ${e.message}`; }
  }
  // jax-js has no int8: any integer dtype with NumPy's values would do for floor_divide of bools
  const ok = got === want || (want.startsWith("int8") && /^(u?int32) \[1\]$/.test(got));
  bug ||= !ok;
  console.log(`${what}: jax-js ${got}; NumPy ${want}${ok ? "" : "   <-- wrong"}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
