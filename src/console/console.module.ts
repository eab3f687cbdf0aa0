// Web console at /console (issue 9): static assets built at setup.
import type { Module } from '../module.js';
import type { Services } from '../services.js';

export function consoleModule(_s: Services): Module {
  return { routes: [] };
}
