// Video tasks (issue 6): routes, and the in-process worker unless disabled.
import type { Module } from '../module.js';
import type { Services } from '../services.js';

export function videoModule(_s: Services, _opts: { worker: boolean }): Module {
  return { routes: [] };
}
