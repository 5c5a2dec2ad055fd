// jax-js: integer `remainder`/`floor_divide` by zero traps when the array is read, and once
// trapped the array silently reads as zeros, its other elements included.
//
// NumPy defines `x % 0` and `x // 0` for integers as 0 (with a RuntimeWarning):
// `remainder(int32 [7, -7, 5], [0, 2, 0])` is `[0, 1, 0]`. jax-js 0.1.25 records the op, and the
// read (`dataSync`) throws `WebAssembly.RuntimeError: remainder by zero` (`floor_divide` too,
// and `floor_divide(INT32_MIN, -1)` throws "divide result unrepresentable"). The error comes
// from running, not at the call, and the array does not keep failing: a second read returns
// `[0, 0, 0]`, losing the well-defined `-7 % 2 = 1` with no error.
//
// Breaks LZ-NUM-001 (elementwise integer results equal NumPy's; `remainder`'s domain includes
// zero divisors) and LZ-ERR-009's requirement that a tensor whose program failed fails again,
// with the same error, every time it is observed.
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const i32 = (...v) => np.array(new Int32Array(v), { dtype: np.int32 });
const want = [0, 1, 0];
const r = np.remainder(i32(7, -7, 5), i32(0, 2, 0));
let bug = false;
for (const read of ["first read", "second read"]) {
  let got;
  try { got = JSON.stringify(Array.from(r.ref.dataSync())); } catch (e) { got = `${e.constructor.name}: ${e.message}`; }
  const wrong = got !== JSON.stringify(want);
  bug ||= wrong;
  console.log(`remainder(int32 [7, -7, 5], [0, 2, 0]), ${read}: jax-js ${got}; NumPy ${JSON.stringify(want)}${wrong ? "   <-- wrong" : ""}`);
}
let got;
try { got = JSON.stringify(Array.from(np.floorDivide(i32(7, -7), i32(0, 0)).dataSync())); } catch (e) { got = `${e.constructor.name}: ${e.message}`; }
bug ||= got !== "[0,0]";
console.log(`floor_divide(int32 [7, -7], [0, 0]): jax-js ${got}; NumPy [0,0]${got !== "[0,0]" ? "   <-- wrong" : ""}`);
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
