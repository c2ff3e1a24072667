/** esbuild bundles an imported stylesheet into viewer.css. */
declare module '*.css';
