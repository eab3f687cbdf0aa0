// The describer's wording without models: facts built from hand-made detections, written in English and
// Chinese; prompt parsing; scene guesses. Exact strings, so a change in wording is a visible diff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COCO_CLASSES } from '../../src/detection/coco-classes.js';
import type { DetectedObject } from '../../src/detection/detect.js';
import { buildFacts } from '../../src/vision/describe/facts.js';
import { writeEnglish } from '../../src/vision/describe/english.js';
import { writeChinese } from '../../src/vision/describe/chinese.js';
import { parsePrompt } from '../../src/vision/describe/prompt.js';
import { guessScene } from '../../src/vision/describe/scene.js';
import { describeLanguage } from '../../src/vision/describe/describer.js';

const W = 900;
const H = 600;
const obj = (
  cls: string,
  bbox: [number, number, number, number],
  color?: string,
  confidence = 0.8,
): DetectedObject => ({ class: cls, confidence, bbox, attributes: color ? { color } : {} });

// A dining room: a table in front, two chairs left and right, a cup, and a sign. Groups are ordered by
// weight (sum over objects of sqrt(area) x confidence), so the two chairs come before the table.
const room = [
  obj('dining table', [200, 300, 700, 600], 'brown', 0.9),
  obj('chair', [20, 250, 200, 560], 'black'),
  obj('chair', [720, 250, 890, 560], 'black'),
  obj('cup', [420, 280, 470, 330], 'white', 0.6),
];
const ocr = {
  text: 'CAFE ROMA\nxx',
  blocks: [
    { text: 'CAFE ROMA', bbox: [300, 20, 600, 80] as [number, number, number, number], confidence: 0.97 },
    { text: 'xx', bbox: [0, 0, 5, 5] as [number, number, number, number], confidence: 0.99 },
  ],
};
const detailed = buildFacts({ width: W, height: H }, room, { ocr, palette: ['white', 'brown'], detailed: true });
const plain = buildFacts({ width: W, height: H }, room, { detailed: false });

test('English: scene, objects with colours and positions, quoted text, palette', () => {
  assert.equal(
    writeEnglish(detailed, { kind: 'describe' }),
    'This looks like a dining room. The picture shows two black chairs, one on the left and one on the right, a brown dining table in the centre foreground and a white cup in the centre. ' +
      'The text in the picture reads "CAFE ROMA". The main colours are white and brown.',
  );
  assert.equal(
    writeEnglish(plain, { kind: 'describe' }),
    'This looks like a dining room. The picture shows two chairs, a dining table and a cup.',
  );
});

test('Chinese: the same facts with measure words and Chinese order', () => {
  assert.equal(
    writeChinese(detailed, { kind: 'describe' }),
    '这看起来是餐厅。画面中，有两把黑色的椅子，左边一把，右边一把；正前方有一张棕色的餐桌；中间有一个白色的杯子。图中可以读到的文字：“CAFE ROMA”。主要颜色是白色和棕色。',
  );
  assert.equal(writeChinese(plain, { kind: 'describe' }), '这看起来是餐厅。画面中有两把椅子、一张餐桌和一个杯子。');
});

test('counts, presence and focus in both languages', () => {
  assert.equal(
    writeEnglish(detailed, { kind: 'count', classes: ['chair'] }),
    'There are 2 chairs in the picture, one on the left and one on the right.',
  );
  assert.equal(writeChinese(detailed, { kind: 'count', classes: ['chair'] }), '图中有2把椅子，左边一把，右边一把。');
  assert.equal(writeEnglish(plain, { kind: 'count', classes: ['person'] }), 'I cannot see any people in this picture.');
  assert.equal(
    writeEnglish(plain, { kind: 'count', classes: [] }),
    'I count 4 objects: 2 chairs, 1 dining table and 1 cup.',
  );
  assert.equal(writeChinese(plain, { kind: 'count', classes: [] }), '图中共有4个物体：2把椅子、1张餐桌和1个杯子。');
  assert.equal(
    writeEnglish(detailed, { kind: 'presence', classes: ['cup'] }),
    'Yes, there is a white cup in the centre.',
  );
  assert.equal(writeChinese(detailed, { kind: 'presence', classes: ['dog'] }), '没有，图中没有看到狗。');
  assert.equal(
    writeEnglish(detailed, { kind: 'focus', classes: ['cup', 'knife'] }),
    'The picture shows a white cup in the centre. I cannot see any knives in this picture.',
  );
  assert.equal(
    writeEnglish(plain, { kind: 'text' }),
    'Text is only read at high detail; ask again with detail "high".',
  );
});

test('many objects: the main ones described, the rest summed up', () => {
  const many = buildFacts(
    { width: W, height: H },
    [
      ...Array.from({ length: 7 }, (_, i) => obj('person', [i * 120, 100, i * 120 + 100, 500], 'blue')),
      obj('car', [0, 0, 50, 50]),
      obj('dog', [0, 0, 40, 40]),
      obj('bench', [0, 0, 30, 30]),
      obj('bird', [0, 0, 20, 20]),
      obj('kite', [0, 0, 10, 10]),
      obj('cup', [0, 0, 9, 9]),
      obj('bottle', [0, 0, 8, 8]),
      obj('book', [0, 0, 7, 7]),
      obj('clock', [0, 0, 6, 6]),
    ],
    { detailed: true },
  );
  assert.equal(
    writeEnglish(many, { kind: 'describe' }),
    'This looks like a park. The picture shows seven blue people across the picture, a car on the left, a dog on the left and a bench on the left. ' +
      'There is also a bird, a kite, a cup, a bottle and two other objects.',
  );
});

test('prompt parsing: classes by any name, counts, yes/no, text, beyond the model', () => {
  const p = (s: string) => parsePrompt(s, COCO_CLASSES);
  assert.deepEqual(p(''), { kind: 'describe' });
  assert.deepEqual(p('how many people?'), { kind: 'count', classes: ['person'] });
  assert.deepEqual(p('How many men and dogs are there?'), { kind: 'count', classes: ['person', 'dog'] });
  assert.deepEqual(p('图中有几个人？'), { kind: 'count', classes: ['person'] });
  assert.deepEqual(p('有多少辆自行车'), { kind: 'count', classes: ['bicycle'] });
  assert.deepEqual(p('how many objects are there?'), { kind: 'count', classes: [] });
  assert.deepEqual(p('how many clouds?'), { kind: 'count-unknown', noun: 'clouds' });
  assert.deepEqual(p('天上有几朵云？'), { kind: 'count-unknown', noun: '云' });
  assert.deepEqual(p('Is there a hot dog?'), { kind: 'presence', classes: ['hot dog'] });
  assert.deepEqual(p('Describe the sofa and the TV'), { kind: 'focus', classes: ['couch', 'tv'] });
  assert.deepEqual(p('What does the sign say?'), { kind: 'text' });
  assert.deepEqual(p('Describe this picture'), { kind: 'describe' });
  assert.deepEqual(p('描述一下这张图片'), { kind: 'describe' });
  assert.deepEqual(p('What is the man thinking?'), { kind: 'unsupported', classes: ['person'] });
  assert.deepEqual(p('Translate this into Klingon'), { kind: 'unsupported', classes: [] });
});

test('scene guesses from object sets', () => {
  const s = (...classes: string[]) => guessScene(new Map(classes.map((c) => [c, 1])))?.en;
  assert.equal(s('dining table', 'chair'), 'a dining room');
  assert.equal(s('dining table', 'pizza'), 'a meal at a table');
  assert.equal(s('toilet', 'sink'), 'a bathroom');
  assert.equal(s('oven'), 'a kitchen');
  assert.equal(s('traffic light', 'person'), 'a street');
  assert.equal(guessScene(new Map([['car', 2]]))?.en, 'a street');
  assert.equal(s('car'), undefined, 'one car alone is not a street');
  assert.equal(s('giraffe'), 'wildlife, perhaps on a savanna or in a zoo');
  assert.equal(s('person'), undefined);
});

test('languages: en and zh with region subtags, nothing else', () => {
  assert.equal(describeLanguage(undefined), 'en');
  assert.equal(describeLanguage('EN-us'), 'en');
  assert.equal(describeLanguage('zh-Hans'), 'zh');
  assert.equal(describeLanguage('zh_CN'), 'zh');
  assert.equal(describeLanguage('fr'), undefined);
  assert.equal(describeLanguage(''), undefined);
});
