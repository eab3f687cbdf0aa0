// Vite bundles the stylesheet imported by main.tsx; TypeScript only needs to know the import is allowed.
declare module '*.css';
