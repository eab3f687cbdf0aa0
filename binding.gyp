{
  "target_defaults": {
    "include_dirs": [
      "<!@(node -p \"require('node-addon-api').include\")",
      "<!(node native/usearch/patch-headers.mjs build/usearch-include)",
      "native/core"
    ],
    "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_CPP_EXCEPTIONS_ALL"],
    "cflags!": ["-fno-exceptions", "-O2", "-O0"],
    "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-O2", "-O0"],
    "cflags": ["-O3", "-Wall", "-Wextra"],
    "cflags_cc": ["-std=c++17", "-O3", "-Wall", "-Wextra", "-fexceptions"]
  },
  "targets": [
    {
      "target_name": "sightflow_common",
      "type": "static_library",
      "sources": [
        "<!@(node -p \"require('fs').readdirSync('native/addon').filter(f=>f.endsWith('.cc')&&f!=='addon.cc'&&f!=='decode_binding.cc').sort().map(f=>'native/addon/'+f).join(' ')\")",
        "<!@(node -p \"const fs=require('fs');['gpu','image','track','vectors'].flatMap(d=>fs.existsSync('native/core/'+d)?fs.readdirSync('native/core/'+d).filter(f=>f.endsWith('.cc')).sort().map(f=>'native/core/'+d+'/'+f):[]).join(' ')\")"
      ],
      "include_dirs": ["<!@(pkg-config --cflags-only-I libjpeg | sed 's/-I//g')"],
      "cflags": ["-fPIC"]
    },
    {
      "target_name": "sightflow",
      "dependencies": ["sightflow_common"],
      "sources": [
        "native/addon/addon.cc",
        "native/addon/decode_binding.cc",
        "<!@(node -p \"const fs=require('fs');fs.readdirSync('native/core/decode').filter(f=>f.endsWith('.cc')).sort().map(f=>'native/core/decode/'+f).join(' ')\")"
      ],
      "include_dirs": ["<!@(pkg-config --cflags-only-I libavformat libavcodec libswscale libavutil | sed 's/-I//g')"],
      "libraries": ["<!@(pkg-config --libs libavformat libavcodec libswscale libavutil libjpeg)", "-ldl"]
    },
    {
      "target_name": "sightflow_novideo",
      "dependencies": ["sightflow_common"],
      "sources": ["native/addon/addon.cc"],
      "defines": ["SIGHTFLOW_NO_VIDEO"],
      "libraries": ["<!@(pkg-config --libs libjpeg)", "-ldl"],
      "ldflags": ["-Wl,-rpath,'$$ORIGIN'"]
    }
  ]
}
