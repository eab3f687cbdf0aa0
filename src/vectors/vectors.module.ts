// Vector collections (issue 7): routes and index management.
import type { Module } from '../module.js';
import type { Services } from '../services.js';

export function vectorsModule(_s: Services): Module {
  return { routes: [] };
}
