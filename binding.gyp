{
  "targets": [
    {
      "target_name": "sightflow",
      "sources": [
        "<!@(node -p \"require('fs').readdirSync('native/addon').filter(f=>f.endsWith('.cc')).map(f=>'native/addon/'+f).join(' ')\")",
        "<!@(node -p \"['decode','image','track'].flatMap(d=>require('fs').readdirSync('native/core/'+d).filter(f=>f.endsWith('.cc')).map(f=>'native/core/'+d+'/'+f)).join(' ')\")"
      ],
      "include_dirs": [
        "<!@(node -p \"require('node-addon-api').include\")",
        "native/core",
        "<!@(pkg-config --cflags-only-I libavformat libavcodec libswscale libavutil | sed 's/-I//g')"
      ],
      "libraries": ["<!@(pkg-config --libs libavformat libavcodec libswscale libavutil)"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-O3", "-Wall", "-Wextra", "-fexceptions"]
    }
  ]
}
