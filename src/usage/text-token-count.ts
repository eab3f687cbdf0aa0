// Counting a text's o200k_base tokens as ordinary text, exactly as the tokenizer would, at a fraction of its
// cost for the texts billed on every image (detect's answer: JSON whose numbers change and whose keys and
// punctuation repeat). Counting runs on the thread that owns the models (docs/capacity.md, "Front processes").
//
// Why the shortcut is exact: o200k_base first splits a text into pieces by a pattern in which an ASCII digit
// can only be matched by `\p{N}{1,3}`, so every run of digits is cut into pieces of three from its start and no
// piece holds a digit and anything else; every string of one to three ASCII digits is one token (checked when
// the counter is made; if not, every text goes to the tokenizer whole). So a digit run of n digits is
// ceil(n / 3) tokens, and the text between digit runs splits as it would alone, with one exception: the
// pattern's one look-ahead, `\s+(?!\S)`, sees the digit after trailing whitespace, so a digit run that follows
// whitespace is left inside its neighbours. The pieces between digits repeat from answer to answer, so their
// counts are remembered. Texts with any non-ASCII character go to the tokenizer whole.

/** The tokenizer's own count of a text taken as ordinary text (special-token spellings included). */
export type CountOrdinary = (text: string) => number;

/** Pieces between digit runs longer than this are counted each time, not remembered. */
const MAX_REMEMBERED_LENGTH = 64;
/** Remembered pieces; the memory is emptied when it holds this many. */
const MAX_REMEMBERED = 4096;
const NON_ASCII = /[^\x00-\x7f]/;

/** A counter equal to `count` on every text, faster where digits break the text into repeated pieces. */
export function fastTokenCounter(count: CountOrdinary): CountOrdinary {
  if (!digitGroupsAreOneToken(count)) return count;
  const remembered = new Map<string, number>();
  const piece = (text: string): number => {
    if (text.length > MAX_REMEMBERED_LENGTH) return count(text);
    let n = remembered.get(text);
    if (n === undefined) {
      n = count(text);
      if (remembered.size >= MAX_REMEMBERED) remembered.clear();
      remembered.set(text, n);
    }
    return n;
  };
  return (text: string): number => {
    if (NON_ASCII.test(text)) return count(text);
    let tokens = 0;
    let start = 0; // where the text not yet counted begins
    let i = 0;
    const end = text.length;
    while (i < end) {
      if (!isDigit(text.charCodeAt(i))) {
        i++;
        continue;
      }
      let j = i + 1;
      while (j < end && isDigit(text.charCodeAt(j))) j++;
      if (i === 0 || !isSpace(text.charCodeAt(i - 1))) {
        if (i > start) tokens += piece(text.slice(start, i));
        tokens += Math.ceil((j - i) / 3);
        start = j;
      }
      i = j;
    }
    if (start < end) tokens += piece(start === 0 ? text : text.slice(start));
    return tokens;
  };
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** The whitespace `\s` matches among ASCII characters: tab, line feed, vertical tab, form feed, carriage return, space. */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** Every string of one, two or three ASCII digits ("0" .. "999", leading zeros included) is one token. */
function digitGroupsAreOneToken(count: CountOrdinary): boolean {
  for (let width = 1, end = 10; width <= 3; width++, end *= 10)
    for (let n = 0; n < end; n++) if (count(String(n).padStart(width, '0')) !== 1) return false;
  return true;
}
