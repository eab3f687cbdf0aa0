// The pieces of request schema that the task body and every step's schema share: the "Expected X for field
// but received Y" messages, unit numbers, class-name lists and a step's `when` filter.
import { z } from 'zod';

export const received = (input: unknown): string =>
  input === undefined
    ? 'nothing'
    : input === null
      ? 'null'
      : typeof input === 'string'
        ? input.length > 200 // a URL is quoted whole; a field given megabytes is not echoed back
          ? `a string of ${input.length} characters`
          : JSON.stringify(input)
        : Array.isArray(input)
          ? 'an array'
          : typeof input === 'object'
            ? 'an object'
            : String(input);
export const expected = (what: string, field: string) => ({
  error: (iss: { input?: unknown }) => `Expected ${what} for ${field} but received ${received(iss.input)}`,
});
export const unit = (field: string) =>
  z
    .number(expected('a number between 0 and 1', field))
    .min(0, expected('a number between 0 and 1', field))
    .max(1, expected('a number between 0 and 1', field));
export const names = (field: string) =>
  z
    .array(
      z
        .string(expected('a string', `each entry of ${field}`))
        .min(1, expected('a non-empty string', `each entry of ${field}`)),
      expected('an array of strings', field),
    )
    .max(100, expected('at most 100 entries', field));

/** A step's `when`: which targets it works on. */
export const When = z
  .strictObject({
    class_is: names('when.class_is').optional().meta({ description: 'Only targets of these classes' }),
    min_confidence: unit('when.min_confidence')
      .optional()
      .meta({ description: 'Only targets at or above this confidence' }),
  })
  .meta({ description: 'Targets that do not match pass unchanged to the next step' });
